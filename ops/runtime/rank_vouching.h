// Vouching: how a rank's server learns that a connection from another machine is its job's, not another user's.
//
// A server sees only the address a connection comes from; every user of that machine shares it. With a key derived
// from the job secret, each rank of a job across machines also answers questions on UDP at its server's port: "is
// the TCP socket from <your endpoint> to <mine> yours?". It looks the socket up in its machine's TCP table and
// answers whether its user owns it, under an HMAC of the question's nonce, endpoints and verdict. A server serves a
// connection from another machine only when a rank there vouches for it so; another user there can neither answer
// for the job's ranks (no key) nor own a socket they would vouch for.
#ifndef NPU_BRIDGE_OPS_RUNTIME_RANK_VOUCHING_H_
#define NPU_BRIDGE_OPS_RUNTIME_RANK_VOUCHING_H_

#include <sys/socket.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ops/runtime/job_peers.h"

namespace npu_bridge {

// Answers questions about this machine's sockets that the hosts of `peers` ask, on UDP `port` of every interface,
// under `key`, from a thread that lives as long as the process (as `peers` must).
absl::Status StartVouching(const std::string& key, int port, const JobPeers* peers);

// Whether one of `vouchers` (a rank of the job on the connection's machine: its address and server port) vouches,
// under `key`, that the connection from `peer` to `own` is its user's. Asks them all, again every 0.3 s, for up
// to 3 s. On a refusal `*why` says what was heard.
bool Vouched(const std::string& key, const sockaddr_storage& own, const sockaddr_storage& peer,
             const std::vector<sockaddr_storage>& vouchers, std::string* why);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_RANK_VOUCHING_H_
