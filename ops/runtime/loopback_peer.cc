#include "ops/runtime/loopback_peer.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace npu_bridge {
namespace {

// An endpoint of `fd` as the kernel's tables print it: each 32-bit group of the address read as one native
// integer, then the port, in hexadecimal. 127.0.0.1:80 is "0100007F:0050" in /proc/net/tcp on a little-endian
// machine; the same endpoint held by an IPv6 socket (gRPC makes dual-stack ones) is the IPv4-mapped
// "0000000000000000FFFF00000100007F:0050" in /proc/net/tcp6. `as_ipv4` stays empty for an IPv6-only address.
bool Endpoint(int fd, bool peer, std::string* as_ipv4, std::string* as_ipv6) {
  sockaddr_storage endpoint{};
  socklen_t length = sizeof(endpoint);
  auto* address = reinterpret_cast<sockaddr*>(&endpoint);
  if ((peer ? getpeername(fd, address, &length) : getsockname(fd, address, &length)) != 0) return false;
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

std::optional<uid_t> LoopbackPeerOwner(int fd) {
  std::string own_v4, own_v6, peer_v4, peer_v6;
  if (!Endpoint(fd, false, &own_v4, &own_v6) || !Endpoint(fd, true, &peer_v4, &peer_v6)) return std::nullopt;
  if (!peer_v4.empty() && !own_v4.empty()) {
    if (auto owner = Owner("/proc/self/net/tcp", peer_v4, own_v4)) return owner;
  }
  return Owner("/proc/self/net/tcp6", peer_v6, own_v6);
}

}  // namespace npu_bridge
