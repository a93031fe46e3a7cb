#include "ops/runtime/socket_owner.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace npu_bridge {
namespace {

// `endpoint` as the kernel's tables print it: each 32-bit group of the address read as one native integer, then
// the port, in hexadecimal. 127.0.0.1:80 is "0100007F:0050" in /proc/net/tcp on a little-endian machine; the same
// endpoint held by an IPv6 socket is the IPv4-mapped "0000000000000000FFFF00000100007F:0050" in /proc/net/tcp6.
// `as_ipv4` stays empty for an IPv6-only address.
bool Endpoint(const sockaddr_storage& endpoint, std::string* as_ipv4, std::string* as_ipv6) {
  uint32_t groups[4] = {0, 0, htonl(0x0000FFFFu), 0};
  unsigned port = 0;
  bool ipv4 = true;
  if (endpoint.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&endpoint);
    groups[3] = v4->sin_addr.s_addr;
    port = ntohs(v4->sin_port);
  } else if (endpoint.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&endpoint);
    std::memcpy(groups, v6->sin6_addr.s6_addr, sizeof(groups));
    port = ntohs(v6->sin6_port);
    ipv4 = IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr);
  } else {
    return false;
  }
  char text[64];
  std::snprintf(text, sizeof(text), "%08X%08X%08X%08X:%04X", groups[0], groups[1], groups[2], groups[3], port);
  *as_ipv6 = text;
  std::snprintf(text, sizeof(text), "%08X:%04X", groups[3], port);
  *as_ipv4 = ipv4 ? text : "";
  return true;
}

// The owner listed for the socket whose local endpoint is `local` and remote endpoint is `remote` in `table`.
std::optional<uid_t> Owner(const char* table_path, const std::string& local, const std::string& remote) {
  std::unique_ptr<FILE, int (*)(FILE*)> table(std::fopen(table_path, "re"), &std::fclose);
  if (table == nullptr) return std::nullopt;
  char line[512];
  if (std::fgets(line, sizeof(line), table.get()) == nullptr) return std::nullopt;  // the header
  while (std::fgets(line, sizeof(line), table.get()) != nullptr) {
    char row_local[64], row_remote[64];
    unsigned long owner = 0;
    // Columns: sl, local, remote, state, tx:rx queue, timer, retransmits, uid, ...
    if (std::sscanf(line, " %*u: %63s %63s %*s %*s %*s %*s %lu", row_local, row_remote, &owner) == 3 &&
        local == row_local && remote == row_remote) {
      return static_cast<uid_t>(owner);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<uid_t> SocketOwner(const sockaddr_storage& local, const sockaddr_storage& remote) {
  std::string local_v4, local_v6, remote_v4, remote_v6;
  if (!Endpoint(local, &local_v4, &local_v6) || !Endpoint(remote, &remote_v4, &remote_v6)) return std::nullopt;
  if (!local_v4.empty() && !remote_v4.empty()) {
    if (auto owner = Owner("/proc/self/net/tcp", local_v4, remote_v4)) return owner;
  }
  return Owner("/proc/self/net/tcp6", local_v6, remote_v6);
}

}  // namespace npu_bridge
