// A small streaming JSON writer for the apps' machine-readable output. It keeps
// track of commas and nesting so that callers only say what goes where.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpk_app {

class JsonWriter {
public:
    // indent == 0 writes everything on one line.
    explicit JsonWriter(int indent = 2) : indent_(indent) {}

    JsonWriter &begin_object(const char *key = nullptr);
    JsonWriter &end_object();
    JsonWriter &begin_array(const char *key = nullptr);
    JsonWriter &end_array();

    JsonWriter &field(const char *key, const std::string &value);
    JsonWriter &field(const char *key, const char *value);  // null pointer: null
    JsonWriter &field(const char *key, double value);       // NaN/Inf: null
    JsonWriter &field(const char *key, int64_t value);
    JsonWriter &field(const char *key, uint64_t value);
    JsonWriter &field(const char *key, int value) { return field(key, int64_t(value)); }
    JsonWriter &field(const char *key, bool value);
    JsonWriter &field(const char *key, std::optional<double> value);
    JsonWriter &null_field(const char *key);

    // The document so far, with a trailing newline once the outermost value is closed.
    const std::string &str() const { return out_; }

private:
    void key(const char *key);
    void raw(const std::string &text);
    void newline();

    std::string out_;
    std::vector<bool> has_items_;  // one per open object/array
    int indent_;
};

std::string json_escape(const std::string &text);

}  // namespace gpk_app
