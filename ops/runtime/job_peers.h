// The machines a job's rank servers may hear from: the hosts of its cluster, resolved once when a server starts,
// and the ranks on each that can vouch for a connection from it (rank_vouching.h).
#ifndef NPU_BRIDGE_OPS_RUNTIME_JOB_PEERS_H_
#define NPU_BRIDGE_OPS_RUNTIME_JOB_PEERS_H_

#include <sys/socket.h>

#include <array>
#include <string>
#include <vector>

#include "tensorflow/core/protobuf/tensorflow_server.pb.h"

namespace npu_bridge {

// An address as 16 bytes of IPv6, an IPv4 address in its IPv4-mapped form (::ffff:a.b.c.d).
using MappedAddress = std::array<unsigned char, 16>;

// The mapped form of `address` (AF_INET or AF_INET6); false for another family.
bool ToMappedAddress(const sockaddr* address, MappedAddress* out);

class JobPeers {
 public:
  // Resolves the host of every task of `server_def`'s cluster ("host:port", "[v6]:port"). A host that does not
  // resolve is logged and left out: its connections will be closed.
  explicit JobPeers(const tensorflow::ServerDef& server_def);

  // True when every task's host is 127.0.0.1: the job lives on this machine.
  bool AllOnLoopback() const { return all_on_loopback_; }

  // Whether `address` (an IPv4 or IPv6 socket address) is one of the hosts' addresses.
  bool Contains(const sockaddr_storage& address) const;

  // The tasks whose host is at `address`, each as that address with the task's port.
  std::vector<sockaddr_storage> TasksAt(const sockaddr_storage& address) const;

  // The port of the server's own task (0 when the cluster does not name it).
  int OwnPort() const { return own_port_; }

 private:
  struct Task {
    MappedAddress address;
    int port;
  };
  std::vector<Task> tasks_;  // one per address a task's host resolves to
  bool all_on_loopback_ = true;
  int own_port_ = 0;
};

// True when `address` is a loopback address (127.0.0.0/8, ::1, or IPv4-mapped loopback).
bool IsLoopback(const sockaddr_storage& address);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_JOB_PEERS_H_
