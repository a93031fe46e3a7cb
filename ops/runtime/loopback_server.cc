// A TensorFlow gRPC server for a job whose ranks all run on this machine: it listens on 127.0.0.1 only and
// serves only connections opened by its own user.
//
// TensorFlow's GrpcServer always listens on 0.0.0.0 and authenticates nobody, so every machine that reaches this
// one, and every user of this one, could run graphs in a rank. npu_bridge_register_loopback_server(protocol)
// registers a server factory for `protocol` (collectives/loopback_server.py names it); a ServerDef with that
// protocol gets a GrpcServer whose listening address is rewritten to 127.0.0.1 before gRPC binds it, and whose
// gRPC server checks each accepted connection's owner (loopback_peer.h) before reading from it. Everything else
// is TensorFlow's own server.
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
#include "ops/runtime/loopback_peer.h"
#include "ops/runtime/no_throw.h"
#include "tensorflow/core/distributed_runtime/rpc/grpc_server_lib.h"
#include "tensorflow/core/distributed_runtime/server_lib.h"

namespace npu_bridge {
namespace {

constexpr const char* kAnyAddresses[] = {"0.0.0.0:", "[::]:"};  // what TensorFlow binds (IPv4 and IPv6 forms)
constexpr char kLoopback[] = "127.0.0.1:";

// ServerBuilder keeps its listening ports private and offers no way to change one. An explicit instantiation
// may name a private member (no access check applies there), which gives a pointer to it.
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
};

// Whether the other end of the accepted connection `fd` is a socket of this process's user; logs the first refusals.
bool FromOwnUser(int fd) {
  const auto owner = LoopbackPeerOwner(fd);
  if (owner.has_value() && *owner == geteuid()) return true;
  LOG_FIRST_N(ERROR, 10) << "npu_bridge: a rank's collective server closed a connection from "
                         << (owner.has_value() ? "user " + std::to_string(*owner) : std::string("an unknown user"))
                         << ": it serves only processes of user " << geteuid() << ", its job's";
  return false;
}

// A connection from another user is shut down, not failed: gRPC stops accepting on a listener whose mutator
// fails, which would let any user end the job's collectives. Shut down, the connection reads as closed before
// a byte of it is parsed. gRPC's threads call this, so nothing may throw out of it.
bool ServeOwnUserOnly(const SocketInfo* info, SocketMutator* /*mutator*/) {
  if (info->use != kServerConnection) return true;
  if (!NoThrowValue(false, [&] { return FromOwnUser(info->fd); })) shutdown(info->fd, SHUT_RDWR);
  return true;
}
bool LeaveUnchanged(int /*fd*/, SocketMutator* /*mutator*/) { return true; }
int CompareIdentity(SocketMutator* a, SocketMutator* b) { return (a > b) - (a < b); }
void KeepForever(SocketMutator* /*mutator*/) {}

constexpr SocketMutatorTable kOwnUserOnlyTable = {&LeaveUnchanged, &CompareIdentity, &KeepForever, &ServeOwnUserOnly};
// One mutator for every server of the process; its count never reaches zero, so gRPC never destroys it.
SocketMutator own_user_only = {&kOwnUserOnlyTable, {static_cast<gpr_atm>(1) << 40}};

void* SameMutator(void* mutator) { return mutator; }
void ForgetMutator(void* /*mutator*/) {}
int CompareMutators(void* a, void* b) { return (a > b) - (a < b); }
constexpr grpc_arg_pointer_vtable kMutatorArgument = {&SameMutator, &ForgetMutator, &CompareMutators};

// Puts own_user_only in the server's channel arguments, as ChannelArguments::SetSocketMutator would (that
// function is not exported by TensorFlow's libraries).
class OwnUserOnlyOption : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments* arguments) override {
    auto& strings = arguments->*Member(ArgumentStrings());
    strings.push_back(GRPC_ARG_SOCKET_MUTATOR);
    grpc_arg argument;
    argument.type = GRPC_ARG_POINTER;
    argument.key = const_cast<char*>(strings.back().c_str());
    argument.value.pointer.p = &own_user_only;
    argument.value.pointer.vtable = &kMutatorArgument;
    (arguments->*Member(ArgumentList())).push_back(argument);
  }
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* /*plugins*/) override {}
};

class LoopbackServer : public tensorflow::GrpcServer {
 public:
  LoopbackServer(const tensorflow::ServerDef& server_def, tsl::Env* env) : GrpcServer(server_def, env) {}

  static absl::Status Create(const tensorflow::ServerDef& server_def, tensorflow::DeviceMgr* local_device_mgr,
                             std::unique_ptr<tensorflow::ServerInterface>* out_server) {
    auto server = std::make_unique<LoopbackServer>(server_def, tsl::Env::Default());
    tensorflow::GrpcServerOptions options;
    options.local_device_mgr = local_device_mgr;
    TF_RETURN_IF_ERROR(server->Init(options));
    *out_server = std::move(server);
    return absl::OkStatus();
  }

 protected:
  void MaybeMutateBuilder(grpc::ServerBuilder* builder, int /*requested_port*/) override {
    for (auto& port : builder->*Member(BuilderPorts())) {
      for (const std::string any : kAnyAddresses) {
        if (port.addr.rfind(any, 0) == 0) port.addr = kLoopback + port.addr.substr(any.size());
      }
    }
    (builder->*Member(BuilderOptions())).push_back(std::make_unique<OwnUserOnlyOption>());
  }
};

class LoopbackServerFactory : public tensorflow::ServerFactory {
 public:
  explicit LoopbackServerFactory(std::string protocol) : protocol_(std::move(protocol)) {}

  bool AcceptsOptions(const tensorflow::ServerDef& server_def) override { return server_def.protocol() == protocol_; }

  absl::Status NewServer(const tensorflow::ServerDef& server_def, const Options& options,
                         std::unique_ptr<tensorflow::ServerInterface>* out_server) override {
    return NoThrow("starting a loopback gRPC server",
                   [&] { return LoopbackServer::Create(server_def, options.local_device_mgr, out_server); });
  }

 private:
  const std::string protocol_;
};

}  // namespace
}  // namespace npu_bridge

extern "C" int npu_bridge_register_loopback_server(const char* protocol) {
  return npu_bridge::NoThrowValue(0, [&] {
    static std::mutex mutex;
    static std::string registered;
    std::lock_guard<std::mutex> lock(mutex);
    if (protocol == nullptr || *protocol == '\0') return 0;
    if (!registered.empty()) return registered == protocol ? 1 : 0;
    // TensorFlow keeps the factory for the life of the process.
    tensorflow::ServerFactory::Register("NPU_BRIDGE_LOOPBACK", new npu_bridge::LoopbackServerFactory(protocol));
    registered = protocol;
    return 1;
  });
}
