#include "ops/runtime/job_peers.h"

#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "tensorflow/core/platform/logging.h"

namespace npu_bridge {
namespace {

// The host of "host:port" or "[v6]:port".
std::string HostOf(const std::string& target) {
  if (!target.empty() && target.front() == '[') {
    const auto end = target.find(']');
    return end == std::string::npos ? target : target.substr(1, end - 1);
  }
  const auto colon = target.rfind(':');
  return colon == std::string::npos ? target : target.substr(0, colon);
}

// The port of "host:port" or "[v6]:port"; 0 when there is none.
int PortOf(const std::string& target) {
  const auto colon = target.rfind(':');
  if (colon == std::string::npos || target.find(']', colon) != std::string::npos) return 0;
  const std::string digits = target.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  const int port = std::stoi(digits);
  return port <= 65535 ? port : 0;
}

}  // namespace

JobPeers::JobPeers(const tensorflow::ServerDef& server_def) {
  for (const auto& job : server_def.cluster().job()) {
    for (const auto& [task, target] : job.tasks()) {
      const std::string host = HostOf(target);
      const int port = PortOf(target);
      if (job.name() == server_def.job_name() && task == server_def.task_index()) own_port_ = port;
      all_on_loopback_ = all_on_loopback_ && host == "127.0.0.1";
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* found = nullptr;
      const int failed = getaddrinfo(host.c_str(), nullptr, &hints, &found);
      if (failed != 0) {
        LOG(ERROR) << "npu_bridge: the host " << host << " of task " << task << " of job " << job.name()
                   << " does not resolve here (" << gai_strerror(failed)
                   << "): this rank's collective server will close its connections";
        continue;
      }
      for (const addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
        MappedAddress address;
        if (ToMappedAddress(entry->ai_addr, &address)) tasks_.push_back({address, port});
      }
      freeaddrinfo(found);
    }
  }
}

bool ToMappedAddress(const sockaddr* address, MappedAddress* out) {
  out->fill(0);
  if (address->sa_family == AF_INET) {
    (*out)[10] = (*out)[11] = 0xFF;
    std::memcpy(out->data() + 12, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, 4);
    return true;
  }
  if (address->sa_family == AF_INET6) {
    std::memcpy(out->data(), &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, 16);
    return true;
  }
  return false;
}

bool JobPeers::Contains(const sockaddr_storage& address) const {
  MappedAddress wanted;
  if (!ToMappedAddress(reinterpret_cast<const sockaddr*>(&address), &wanted)) return false;
  return std::any_of(tasks_.begin(), tasks_.end(), [&](const Task& task) { return task.address == wanted; });
}

std::vector<sockaddr_storage> JobPeers::TasksAt(const sockaddr_storage& address) const {
  MappedAddress wanted;
  std::vector<sockaddr_storage> found;
  if (!ToMappedAddress(reinterpret_cast<const sockaddr*>(&address), &wanted)) return found;
  for (const Task& task : tasks_) {
    if (task.address != wanted || task.port == 0) continue;
    sockaddr_storage at = address;
    if (at.ss_family == AF_INET) {
      reinterpret_cast<sockaddr_in&>(at).sin_port = htons(static_cast<uint16_t>(task.port));
    } else {
      reinterpret_cast<sockaddr_in6&>(at).sin6_port = htons(static_cast<uint16_t>(task.port));
    }
    found.push_back(at);
  }
  return found;
}

bool IsLoopback(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&address)->sin_addr.s_addr) >> 24) == 127;
  }
  if (address.ss_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  }
  return false;
}

}  // namespace npu_bridge
