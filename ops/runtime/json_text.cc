#include "ops/runtime/json_text.h"

#include <cstdio>

namespace npu_bridge {

std::string JsonQuote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof(esc), "\\u%04x", c);
          out += esc;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "\"";
  return out;
}

size_t CopyToBuffer(const std::string& json, char* buf, size_t len) {
  if (buf != nullptr && json.size() < len) {
    std::memcpy(buf, json.data(), json.size());
    buf[json.size()] = '\0';
  }
  return json.size();
}

}  // namespace npu_bridge
