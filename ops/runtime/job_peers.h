// The machines a job's rank servers may hear from: the hosts of its cluster, resolved once when a server starts.
#ifndef NPU_BRIDGE_OPS_RUNTIME_JOB_PEERS_H_
#define NPU_BRIDGE_OPS_RUNTIME_JOB_PEERS_H_

#include <sys/socket.h>

#include <array>
#include <string>
#include <vector>

#include "tensorflow/core/protobuf/tensorflow_server.pb.h"

namespace npu_bridge {

class JobPeers {
 public:
  // Resolves the host of every task of `server_def`'s cluster ("host:port", "[v6]:port"). A host that does not
  // resolve is logged and left out: its connections will be closed.
  explicit JobPeers(const tensorflow::ServerDef& server_def);

  // True when every task's host is 127.0.0.1: the job lives on this machine.
  bool AllOnLoopback() const { return all_on_loopback_; }

  // Whether `address` (an IPv4 or IPv6 socket address) is one of the hosts' addresses.
  bool Contains(const sockaddr_storage& address) const;

 private:
  using Address = std::array<unsigned char, 16>;  // IPv6; IPv4 as its IPv4-mapped form
  static bool ToAddress(const sockaddr* address, Address* out);

  std::vector<Address> addresses_;
  bool all_on_loopback_ = true;
};

// True when `address` is a loopback address (127.0.0.0/8, ::1, or IPv4-mapped loopback).
bool IsLoopback(const sockaddr_storage& address);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_JOB_PEERS_H_
