// HMAC-SHA256 (FIPS 180-4, RFC 2104), for the messages by which ranks vouch for their connections. TensorFlow's
// libraries carry a TLS library, but its symbols share their names with the system OpenSSL that Python loads, so
// which one a lookup finds depends on load order; this one is the library's own.
#ifndef NPU_BRIDGE_OPS_RUNTIME_HMAC_SHA256_H_
#define NPU_BRIDGE_OPS_RUNTIME_HMAC_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace npu_bridge {

using Digest = std::array<uint8_t, 32>;

// The SHA-256 digest of `size` bytes at `data`.
Digest Sha256(const void* data, size_t size);

// The HMAC-SHA256 of `size` bytes at `data` under `key`.
Digest HmacSha256(const std::string& key, const void* data, size_t size);

// Whether `a` and `b` are equal, in a time that does not depend on where they differ.
bool SameDigest(const uint8_t* a, const uint8_t* b);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_HMAC_SHA256_H_
