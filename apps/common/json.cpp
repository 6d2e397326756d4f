#include "json.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gpk_app {

std::string json_escape(const std::string &text) {
    std::string out;
    out.reserve(text.size() + 2);
    out += '"';
    for (unsigned char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    out += '"';
    return out;
}

void JsonWriter::newline() {
    if (indent_ == 0) return;
    out_ += '\n';
    out_.append(has_items_.size() * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::key(const char *key) {
    if (!has_items_.empty()) {
        if (has_items_.back()) out_ += ',';
        has_items_.back() = true;
        newline();
    }
    if (key) {
        out_ += json_escape(key);
        out_ += indent_ ? ": " : ":";
    }
}

void JsonWriter::raw(const std::string &text) { out_ += text; }

JsonWriter &JsonWriter::begin_object(const char *k) {
    key(k);
    raw("{");
    has_items_.push_back(false);
    return *this;
}

JsonWriter &JsonWriter::end_object() {
    const bool had_items = has_items_.back();
    has_items_.pop_back();
    if (had_items) newline();
    raw("}");
    if (has_items_.empty()) raw("\n");
    return *this;
}

JsonWriter &JsonWriter::begin_array(const char *k) {
    key(k);
    raw("[");
    has_items_.push_back(false);
    return *this;
}

JsonWriter &JsonWriter::end_array() {
    const bool had_items = has_items_.back();
    has_items_.pop_back();
    if (had_items) newline();
    raw("]");
    if (has_items_.empty()) raw("\n");
    return *this;
}

JsonWriter &JsonWriter::field(const char *k, const std::string &value) {
    key(k);
    raw(json_escape(value));
    return *this;
}

JsonWriter &JsonWriter::field(const char *k, const char *value) {
    if (!value) return null_field(k);
    return field(k, std::string(value));
}

JsonWriter &JsonWriter::field(const char *k, double value) {
    if (!std::isfinite(value)) return null_field(k);
    // The shortest of 15 or 17 digits that reads back as the same double.
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", value);
    if (std::strtod(buf, nullptr) != value) std::snprintf(buf, sizeof buf, "%.17g", value);
    key(k);
    raw(buf);
    return *this;
}

JsonWriter &JsonWriter::field(const char *k, int64_t value) {
    key(k);
    raw(std::to_string(value));
    return *this;
}

JsonWriter &JsonWriter::field(const char *k, uint64_t value) {
    key(k);
    raw(std::to_string(value));
    return *this;
}

JsonWriter &JsonWriter::field(const char *k, bool value) {
    key(k);
    raw(value ? "true" : "false");
    return *this;
}

JsonWriter &JsonWriter::field(const char *k, std::optional<double> value) {
    return value ? field(k, *value) : null_field(k);
}

JsonWriter &JsonWriter::null_field(const char *k) {
    key(k);
    raw("null");
    return *this;
}

}  // namespace gpk_app
