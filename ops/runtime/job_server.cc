// A TensorFlow gRPC server for a rank that serves its own job alone.
//
// TensorFlow's GrpcServer always listens on 0.0.0.0 and authenticates nobody, so every machine that reaches this
// one, and every user of this one, could run graphs in a rank. npu_bridge_register_job_server(protocol) registers
// a server factory for `protocol` (collectives/job_server.py names it); a ServerDef with that protocol gets a
// GrpcServer whose gRPC server judges each accepted connection before reading from it:
//   - one whose other end is a socket of this machine (socket_owner.h) is served when that socket is this
//     process's user's;
//   - one from another machine is served when it comes from an address of a host of the job's cluster
//     (job_peers.h) and, once npu_bridge_set_vouching_key gave the job's key, when a rank of the job on that
//     machine vouches that the socket is its user's (rank_vouching.h).
// A job whose hosts are all 127.0.0.1 also listens on 127.0.0.1 alone. Everything else is TensorFlow's server.
#include <arpa/inet.h>
#include <grpc/impl/channel_arg_names.h>
#include <grpc/support/sync_generic.h>
#include <sys/socket.h>
#include <unistd.h>

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "grpcpp/impl/server_builder_option.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/channel_arguments.h"
#include "ops/runtime/c_api.h"
#include "ops/runtime/job_peers.h"
#include "ops/runtime/no_throw.h"
#include "ops/runtime/rank_vouching.h"
#include "ops/runtime/socket_owner.h"
#include "tensorflow/core/distributed_runtime/rpc/grpc_server_lib.h"
#include "tensorflow/core/distributed_runtime/server_lib.h"

namespace npu_bridge {
namespace {

constexpr const char* kAnyAddresses[] = {"0.0.0.0:", "[::]:"};  // what TensorFlow binds (IPv4 and IPv6 forms)
constexpr char kLoopback[] = "127.0.0.1:";

// ServerBuilder keeps its listening ports and options private, ChannelArguments its arguments, and TensorFlow's
// libraries export neither's setters. An explicit instantiation may name a private member (no access check applies
// there), which gives a pointer to it.
template <typename Tag, typename Tag::type kMember>
struct GrantAccess {
  friend typename Tag::type Member(Tag) { return kMember; }
};
struct BuilderPorts {
  struct Builder : grpc::ServerBuilder {
    using grpc::ServerBuilder::Port;
  };
  using type = std::vector<Builder::Port> grpc::ServerBuilder::*;
  friend type Member(BuilderPorts);
};
template struct GrantAccess<BuilderPorts, &grpc::ServerBuilder::ports_>;
struct BuilderOptions {
  using type = std::vector<std::unique_ptr<grpc::ServerBuilderOption>> grpc::ServerBuilder::*;
  friend type Member(BuilderOptions);
};
template struct GrantAccess<BuilderOptions, &grpc::ServerBuilder::options_>;
struct ArgumentList {
  using type = std::vector<grpc_arg> grpc::ChannelArguments::*;
  friend type Member(ArgumentList);
};
template struct GrantAccess<ArgumentList, &grpc::ChannelArguments::args_>;
struct ArgumentStrings {
  using type = std::list<std::string> grpc::ChannelArguments::*;
  friend type Member(ArgumentStrings);
};
template struct GrantAccess<ArgumentStrings, &grpc::ChannelArguments::strings_>;

// gRPC calls a "socket mutator" named in the server's channel arguments on every socket it makes, including each
// connection it accepts, before reading from it. Its layout is gRPC's (src/core/lib/iomgr/socket_mutator.h, kept
// out of the installed headers); the pinned TensorFlow bundles gRPC 1.74.
enum SocketUse { kClientConnection, kServerListener, kServerConnection };
struct SocketInfo {
  int fd;
  SocketUse use;
};
struct SocketMutator;
struct SocketMutatorTable {
  bool (*mutate_fd)(int fd, SocketMutator* mutator);
  int (*compare)(SocketMutator* a, SocketMutator* b);
  void (*destroy)(SocketMutator* mutator);
  bool (*mutate_fd_2)(const SocketInfo* info, SocketMutator* mutator);
};
struct SocketMutator {
  const SocketMutatorTable* table;
  gpr_refcount references;
  // ours: gRPC reads only the two fields above
  const JobPeers* peers;
  std::string vouching_key;  // empty: the address of a connection from another machine suffices
};

// The address of `address` as people write it (an IPv4-mapped IPv6 address as IPv4).
std::string AddressText(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "an unknown address";
  if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr, text, sizeof(text));
  } else if (address.ss_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      inet_ntop(AF_INET, v6.s6_addr + 12, text, sizeof(text));
    } else {
      inet_ntop(AF_INET6, &v6, text, sizeof(text));
    }
  }
  return text;
}

// Whether the accepted connection `fd` comes from the job: a socket of this process's user on this machine, or
// another machine among the job's hosts. Logs the first refusals.
bool FromTheJob(int fd, const SocketMutator& mutator) {
  sockaddr_storage own{}, peer{};
  socklen_t own_length = sizeof(own), peer_length = sizeof(peer);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&own), &own_length) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) != 0) {
    return false;
  }
  const JobPeers& peers = *mutator.peers;
  std::string refused, why;
  if (const auto owner = SocketOwner(peer, own)) {
    if (*owner == geteuid()) return true;
    refused = "user " + std::to_string(*owner) + " of this machine";
  } else if (IsLoopback(peer)) {  // on this machine, yet its socket is gone: nobody to serve
    refused = "a closed socket of this machine";
  } else if (!peers.Contains(peer)) {
    refused = AddressText(peer) + ", not a host of the job";
  } else if (mutator.vouching_key.empty() || Vouched(mutator.vouching_key, own, peer, peers.TasksAt(peer), &why)) {
    return true;
  } else {
    refused = AddressText(peer) + " that no rank of the job there vouched for (" + why + ")";
  }
  LOG_FIRST_N(ERROR, 10) << "npu_bridge: a rank's collective server closed a connection from " << refused
                         << ": it serves only its job (processes of user " << geteuid()
                         << " here, and the job's other hosts)";
  return false;
}

// A connection from outside the job is shut down, not failed: gRPC stops accepting on a listener whose mutator
// fails, which would let anyone end the job's collectives. Shut down, the connection reads as closed before a
// byte of it is parsed. gRPC's threads call this, so nothing may throw out of it.
bool ServeTheJobOnly(const SocketInfo* info, SocketMutator* mutator) {
  if (info->use != kServerConnection) return true;
  if (!NoThrowValue(false, [&] { return FromTheJob(info->fd, *mutator); })) shutdown(info->fd, SHUT_RDWR);
  return true;
}
bool LeaveUnchanged(int /*fd*/, SocketMutator* /*mutator*/) { return true; }
int CompareIdentity(SocketMutator* a, SocketMutator* b) { return (a > b) - (a < b); }
void KeepForever(SocketMutator* /*mutator*/) {}

constexpr SocketMutatorTable kJobOnlyTable = {&LeaveUnchanged, &CompareIdentity, &KeepForever, &ServeTheJobOnly};

void* SameMutator(void* mutator) { return mutator; }
void ForgetMutator(void* /*mutator*/) {}
int CompareMutators(void* a, void* b) { return (a > b) - (a < b); }
constexpr grpc_arg_pointer_vtable kMutatorArgument = {&SameMutator, &ForgetMutator, &CompareMutators};

// Puts a mutator serving the job of `server_def` in the server's channel arguments, as
// ChannelArguments::SetSocketMutator would (that function is not exported by TensorFlow's libraries).
class JobOnlyOption : public grpc::ServerBuilderOption {
 public:
  explicit JobOnlyOption(SocketMutator* mutator) : mutator_(mutator) {}

  void UpdateArguments(grpc::ChannelArguments* arguments) override {
    auto& strings = arguments->*Member(ArgumentStrings());
    strings.push_back(GRPC_ARG_SOCKET_MUTATOR);
    grpc_arg argument;
    argument.type = GRPC_ARG_POINTER;
    argument.key = const_cast<char*>(strings.back().c_str());
    argument.value.pointer.p = mutator_;
    argument.value.pointer.vtable = &kMutatorArgument;
    (arguments->*Member(ArgumentList())).push_back(argument);
  }
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* /*plugins*/) override {}

 private:
  SocketMutator* const mutator_;
};

// The job's vouching key (npu_bridge_set_vouching_key), for the servers started after it is set.
std::mutex vouching_key_mutex;
std::string& VouchingKey() {
  static auto* key = new std::string;
  return *key;
}

class JobServer : public tensorflow::GrpcServer {
 public:
  // gRPC may use the mutator for as long as the process lives, so it and its peers are never freed (a rank
  // starts one server).
  JobServer(const tensorflow::ServerDef& server_def, tsl::Env* env)
      : GrpcServer(server_def, env),
        mutator_(new SocketMutator{&kJobOnlyTable, {static_cast<gpr_atm>(1) << 40}, new JobPeers(server_def), {}}) {}

  static absl::Status Create(const tensorflow::ServerDef& server_def, tensorflow::DeviceMgr* local_device_mgr,
                             std::unique_ptr<tensorflow::ServerInterface>* out_server) {
    std::string key;
    {
      std::lock_guard<std::mutex> lock(vouching_key_mutex);
      key = VouchingKey();
    }
    auto server = std::make_unique<JobServer>(server_def, tsl::Env::Default());
    const JobPeers& peers = *server->mutator_->peers;
    if (!key.empty() && !peers.AllOnLoopback()) {  // with every host at 127.0.0.1 no connection comes from afar
      TF_RETURN_IF_ERROR(StartVouching(key, peers.OwnPort(), &peers));
      server->mutator_->vouching_key = key;
    }
    tensorflow::GrpcServerOptions options;
    options.local_device_mgr = local_device_mgr;
    TF_RETURN_IF_ERROR(server->Init(options));
    *out_server = std::move(server);
    return absl::OkStatus();
  }

 protected:
  void MaybeMutateBuilder(grpc::ServerBuilder* builder, int /*requested_port*/) override {
    if (mutator_->peers->AllOnLoopback()) {
      for (auto& port : builder->*Member(BuilderPorts())) {
        for (const std::string any : kAnyAddresses) {
          if (port.addr.rfind(any, 0) == 0) port.addr = kLoopback + port.addr.substr(any.size());
        }
      }
    }
    (builder->*Member(BuilderOptions())).push_back(std::make_unique<JobOnlyOption>(mutator_));
  }

 private:
  SocketMutator* const mutator_;
};

class JobServerFactory : public tensorflow::ServerFactory {
 public:
  explicit JobServerFactory(std::string protocol) : protocol_(std::move(protocol)) {}

  bool AcceptsOptions(const tensorflow::ServerDef& server_def) override { return server_def.protocol() == protocol_; }

  absl::Status NewServer(const tensorflow::ServerDef& server_def, const Options& options,
                         std::unique_ptr<tensorflow::ServerInterface>* out_server) override {
    return NoThrow("starting a rank's gRPC server",
                   [&] { return JobServer::Create(server_def, options.local_device_mgr, out_server); });
  }

 private:
  const std::string protocol_;
};

}  // namespace
}  // namespace npu_bridge

extern "C" int npu_bridge_set_vouching_key(const char* key, int length) {
  return npu_bridge::NoThrowValue(0, [&] {
    if (key == nullptr || length != 32) return 0;
    std::lock_guard<std::mutex> lock(npu_bridge::vouching_key_mutex);
    npu_bridge::VouchingKey().assign(key, length);
    return 1;
  });
}

extern "C" int npu_bridge_register_job_server(const char* protocol) {
  return npu_bridge::NoThrowValue(0, [&] {
    static std::mutex mutex;
    static std::string registered;
    std::lock_guard<std::mutex> lock(mutex);
    if (protocol == nullptr || *protocol == '\0') return 0;
    if (!registered.empty()) return registered == protocol ? 1 : 0;
    // TensorFlow keeps the factory for the life of the process.
    tensorflow::ServerFactory::Register("NPU_BRIDGE_JOB", new npu_bridge::JobServerFactory(protocol));
    registered = protocol;
    return 1;
  });
}
