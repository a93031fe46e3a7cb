// Minimal JSON text helpers for the small state records the library hands to Python.
#ifndef NPU_BRIDGE_OPS_JSON_TEXT_H_
#define NPU_BRIDGE_OPS_JSON_TEXT_H_

#include <cstddef>
#include <cstring>
#include <string>

namespace npu_bridge {

// Returns `text` as a quoted JSON string literal.
std::string JsonQuote(const std::string& text);

// Copies `json` (NUL-terminated) into `buf` when it fits and returns json.size(); the C API convention
// is that a return value >= len means "call again with a bigger buffer".
size_t CopyToBuffer(const std::string& json, char* buf, size_t len);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_JSON_TEXT_H_
