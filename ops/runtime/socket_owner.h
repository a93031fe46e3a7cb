// Who owns a TCP socket of this machine's network namespace.
//
// The kernel lists every TCP socket of a network namespace in /proc/net/tcp (or tcp6, for an IPv6 socket, which
// gRPC makes dual-stack: an IPv4 endpoint then appears IPv4-mapped), each with its local and remote endpoints and
// the user that owns it. The server end of a connection made within the machine finds its client's user by looking
// up the row whose local endpoint is the client's and whose remote endpoint is its own; a rank on another machine
// finds the owner of its own end of a connection the same way (rank_vouching.h).
#ifndef NPU_BRIDGE_OPS_RUNTIME_SOCKET_OWNER_H_
#define NPU_BRIDGE_OPS_RUNTIME_SOCKET_OWNER_H_

#include <sys/socket.h>
#include <sys/types.h>

#include <optional>

namespace npu_bridge {

// The user owning the socket of this network namespace whose local endpoint is `local` and whose remote endpoint
// is `remote` (IPv4 or IPv6 socket addresses); nullopt when there is none.
std::optional<uid_t> SocketOwner(const sockaddr_storage& local, const sockaddr_storage& remote);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_SOCKET_OWNER_H_
