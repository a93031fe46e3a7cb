// Who holds the other end of a TCP connection made over this machine's loopback.
//
// For a connection between two sockets of this network namespace the kernel lists both ends in /proc/net/tcp (or
// tcp6, for a client that connected an IPv6 socket to the IPv4-mapped address),
// each with the user that owns it. The server end of an accepted connection therefore finds the client's user
// by looking up the row whose local address is the client's and whose remote address is its own.
#ifndef NPU_BRIDGE_OPS_RUNTIME_LOOPBACK_PEER_H_
#define NPU_BRIDGE_OPS_RUNTIME_LOOPBACK_PEER_H_

#include <sys/types.h>

#include <optional>

namespace npu_bridge {

// The user owning the socket at the other end of `fd`, an accepted TCP connection; nullopt when no socket
// of this network namespace is that end (the peer is on another machine, or already closed).
std::optional<uid_t> LoopbackPeerOwner(int fd);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_LOOPBACK_PEER_H_
