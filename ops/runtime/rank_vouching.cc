#include "ops/runtime/rank_vouching.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "ops/runtime/hmac_sha256.h"
#include "ops/runtime/no_throw.h"
#include "ops/runtime/socket_owner.h"

namespace npu_bridge {
namespace {

// A question: magic, nonce, then the asking server's endpoint and the connection's other endpoint, each as an
// IPv6 (or IPv4-mapped) address and a big-endian port. An answer: its own magic, the question's nonce and
// endpoints, a verdict byte (1: the socket is the answering rank's user's), and the HMAC of all that.
constexpr char kQuestionMagic[8] = {'N', 'P', 'U', 'V', 'Q', 0, 0, 1};
constexpr char kAnswerMagic[8] = {'N', 'P', 'U', 'V', 'A', 0, 0, 1};
constexpr size_t kMagic = 8, kNonce = 16, kEndpoint = 18, kEndpoints = 2 * kEndpoint;
constexpr size_t kQuestion = kMagic + kNonce + kEndpoints;
constexpr size_t kSigned = kQuestion + 1;
constexpr size_t kAnswer = kSigned + 32;
constexpr auto kPatience = std::chrono::seconds(3);
constexpr auto kRepeat = std::chrono::milliseconds(300);

// `address` as 16 bytes of IPv6 (IPv4 mapped) and a big-endian port.
bool PutEndpoint(const sockaddr_storage& address, uint8_t* out) {
  MappedAddress mapped;
  if (!ToMappedAddress(reinterpret_cast<const sockaddr*>(&address), &mapped)) return false;
  std::memcpy(out, mapped.data(), mapped.size());
  const in_port_t port = address.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(address).sin_port
                                                      : reinterpret_cast<const sockaddr_in6&>(address).sin6_port;
  std::memcpy(out + 16, &port, 2);
  return true;
}

sockaddr_storage GetEndpoint(const uint8_t* in) {
  sockaddr_storage address{};
  auto& v6 = reinterpret_cast<sockaddr_in6&>(address);
  v6.sin6_family = AF_INET6;
  std::memcpy(&v6.sin6_addr, in, 16);
  std::memcpy(&v6.sin6_port, in + 16, 2);
  return address;
}

// A UDP socket of `family`; with AF_INET6 it also takes IPv4.
int DatagramSocket(int family) {
  const int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && family == AF_INET6) {
    const int off = 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  }
  return fd;
}

// Waits for one question on `fd` and answers it when it comes from a host of the job; anything else that
// arrives is dropped (so that nobody else learns whose a socket is, or gets answers sent to a forged address).
bool AnswerOne(int fd, const std::string& key, const JobPeers& peers) {
  uint8_t question[kQuestion + 1];
  sockaddr_storage asker{};
  socklen_t asker_length = sizeof(asker);
  const ssize_t got = recvfrom(fd, question, sizeof(question), 0, reinterpret_cast<sockaddr*>(&asker), &asker_length);
  if (got != static_cast<ssize_t>(kQuestion) || std::memcmp(question, kQuestionMagic, kMagic) != 0 ||
      !peers.Contains(asker)) {
    return false;
  }
  const uint8_t* endpoints = question + kMagic + kNonce;
  // The asker's endpoint is the remote end of our socket, the other endpoint its local end.
  const auto owner = SocketOwner(GetEndpoint(endpoints + kEndpoint), GetEndpoint(endpoints));
  uint8_t answer[kAnswer];
  std::memcpy(answer, kAnswerMagic, kMagic);
  std::memcpy(answer + kMagic, question + kMagic, kNonce + kEndpoints);
  answer[kQuestion] = owner.has_value() && *owner == geteuid() ? 1 : 0;
  const Digest mac = HmacSha256(key, answer, kSigned);
  std::memcpy(answer + kSigned, mac.data(), mac.size());
  return sendto(fd, answer, sizeof(answer), 0, reinterpret_cast<const sockaddr*>(&asker), asker_length) > 0;
}

}  // namespace

absl::Status StartVouching(const std::string& key, int port, const JobPeers* peers) {
  if (port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(
        "the cluster names no port for this rank's task, where it would vouch for "
        "its connections to the job's other machines");
  }
  int fd = DatagramSocket(AF_INET6);
  int family = AF_INET6;
  if (fd < 0) {  // a machine without IPv6
    fd = DatagramSocket(AF_INET);
    family = AF_INET;
  }
  if (fd < 0) return absl::InternalError(std::string("cannot make a UDP socket: ") + std::strerror(errno));
  sockaddr_storage any{};
  if (family == AF_INET6) {
    auto& v6 = reinterpret_cast<sockaddr_in6&>(any);
    v6.sin6_family = AF_INET6;
    v6.sin6_addr = in6addr_any;
    v6.sin6_port = htons(static_cast<uint16_t>(port));
  } else {
    auto& v4 = reinterpret_cast<sockaddr_in&>(any);
    v4.sin_family = AF_INET;
    v4.sin_addr.s_addr = htonl(INADDR_ANY);
    v4.sin_port = htons(static_cast<uint16_t>(port));
  }
  if (bind(fd, reinterpret_cast<const sockaddr*>(&any), sizeof(any)) != 0) {
    const int error = errno;
    close(fd);
    return absl::UnavailableError(
        "cannot listen on UDP port " + std::to_string(port) +
        ", where this rank vouches for its connections to the job's other machines: " + std::strerror(error));
  }
  std::thread([fd, key, peers] {
    for (;;) NoThrowValue(false, [&] { return AnswerOne(fd, key, *peers); });
  }).detach();
  return absl::OkStatus();
}

bool Vouched(const std::string& key, const sockaddr_storage& own, const sockaddr_storage& peer,
             const std::vector<sockaddr_storage>& vouchers, std::string* why) {
  if (vouchers.empty()) {
    *why = "no rank of the job runs there";
    return false;
  }
  uint8_t question[kQuestion];
  std::memcpy(question, kQuestionMagic, kMagic);
  if (getrandom(question + kMagic, kNonce, 0) != static_cast<ssize_t>(kNonce) ||
      !PutEndpoint(own, question + kMagic + kNonce) || !PutEndpoint(peer, question + kMagic + kNonce + kEndpoint)) {
    *why = "it could not be asked about";
    return false;
  }
  const int fd = DatagramSocket(peer.ss_family);
  if (fd < 0) {
    *why = std::string("no UDP socket to ask its machine: ") + std::strerror(errno);
    return false;
  }
  *why = "no rank of the job there answered within 3 s";
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  auto next_ask = std::chrono::steady_clock::now();
  bool vouched = false, answered = false;
  while (!answered) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    if (now >= next_ask) {
      for (const auto& voucher : vouchers) {
        sendto(fd, question, sizeof(question), 0, reinterpret_cast<const sockaddr*>(&voucher), sizeof(voucher));
      }
      next_ask = now + kRepeat;
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(std::min(next_ask, deadline) - now);
    pollfd ready{fd, POLLIN, 0};
    if (poll(&ready, 1, static_cast<int>(wait.count()) + 1) <= 0) continue;
    uint8_t answer[kAnswer + 1];
    if (recv(fd, answer, sizeof(answer), 0) != static_cast<ssize_t>(kAnswer)) continue;
    const Digest mac = HmacSha256(key, answer, kSigned);
    if (std::memcmp(answer, kAnswerMagic, kMagic) != 0 ||
        std::memcmp(answer + kMagic, question + kMagic, kNonce + kEndpoints) != 0 ||
        !SameDigest(mac.data(), answer + kSigned)) {
      *why = "an answer without the job's key came (another job, or a forgery)";
      continue;
    }
    answered = true;
    vouched = answer[kQuestion] == 1;
    if (!vouched) *why = "the job's ranks there say the socket is not their user's";
  }
  close(fd);
  return vouched;
}

}  // namespace npu_bridge
