// A TensorFlow gRPC server that listens on 127.0.0.1 only, for a job whose ranks all run on this machine.
//
// TensorFlow's GrpcServer always listens on 0.0.0.0, so every machine that reaches this one could run graphs in
// a rank. npu_bridge_register_loopback_server(protocol) registers a server factory for `protocol`
// (collectives/loopback_server.py names it); a ServerDef with that protocol gets a GrpcServer whose listening
// address is rewritten to 127.0.0.1 before gRPC binds it. Everything else is TensorFlow's own server.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "grpcpp/server_builder.h"
#include "ops/runtime/c_api.h"
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
