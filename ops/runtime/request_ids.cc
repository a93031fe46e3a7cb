// TensorFlow's distributed runtime tags each request with a random id, and a worker refuses an id it saw among its
// last 100000 ("The same RunGraph (Worker) request was received twice"). In TensorFlow 2.21 those ids
// (tensorflow::GetUniqueRequestId, in libtensorflow_cc) come from tsl::random::ThreadLocalNew64, a per-thread
// generator seeded with a single 32-bit word, and the master runs each step on a new thread: every step's RunGraph
// id is then the first output of a generator with a fresh 32-bit seed, two seeds repeat after about 77000 steps
// (the birthday bound of 2^32), and the step fails. A 2-rank job on TensorFlow's collective path failed that way
// after 9101 steps here. npu_bridge_unique_request_ids points libtensorflow_cc's imported ThreadLocalNew64 (its
// PLT slot) at a per-thread generator seeded with 256 bits: the same contract (random 64-bit values, one
// generator per thread) with distinct streams.
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>

#include "ops/runtime/c_api.h"
#include "ops/runtime/no_throw.h"

namespace npu_bridge {
namespace {

constexpr char kLibrary[] = "libtensorflow_cc.so";
constexpr char kSymbol[] = "_ZN3tsl6random16ThreadLocalNew64Ev";

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
#else
constexpr uint32_t kJumpSlot = 0;  // no other architecture has a TensorFlow 2.21 wheel
#endif

uint64_t WellSeededThreadLocalNew64() {
  thread_local std::mt19937_64 generator = [] {
    std::random_device device;
    std::seed_seq seeds{device(), device(), device(), device(), device(), device(), device(), device()};
    return std::mt19937_64(seeds);
  }();
  return generator();
}

struct Search {
  int result = 0;  // 1: the slot points at WellSeededThreadLocalNew64, 0: no slot found, -1: it cannot be written
};

// glibc relocates most address entries of a loaded object's dynamic section in place; tolerate one that it did not.
uintptr_t Address(const dl_phdr_info* info, ElfW(Addr) value) {
  return value < info->dlpi_addr ? info->dlpi_addr + value : value;
}

// Writes `value` into `slot`, making its page writable for the write when it lies in the object's RELRO segment.
bool WriteSlot(const dl_phdr_info* info, uintptr_t slot, uintptr_t value) {
  bool read_only = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) & header = info->dlpi_phdr[i];
    const uintptr_t begin = info->dlpi_addr + header.p_vaddr;
    if (header.p_type == PT_GNU_RELRO && slot >= begin && slot < begin + header.p_memsz) read_only = true;
  }
  const uintptr_t page_size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* page = reinterpret_cast<void*>(slot & ~(page_size - 1));
  if (read_only && mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) return false;
  __atomic_store_n(reinterpret_cast<uintptr_t*>(slot), value, __ATOMIC_RELEASE);
  if (read_only) mprotect(page, page_size, PROT_READ);
  return true;
}

int PatchObject(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, kLibrary) == nullptr) return 0;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    }
  }
  if (dynamic == nullptr) return 0;
  uintptr_t relocations = 0, symbols = 0, names = 0;
  size_t bytes = 0;
  bool rela = false;
  for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
    switch (entry->d_tag) {
      case DT_JMPREL:
        relocations = Address(info, entry->d_un.d_ptr);
        break;
      case DT_PLTRELSZ:
        bytes = entry->d_un.d_val;
        break;
      case DT_PLTREL:
        rela = entry->d_un.d_val == DT_RELA;
        break;
      case DT_SYMTAB:
        symbols = Address(info, entry->d_un.d_ptr);
        break;
      case DT_STRTAB:
        names = Address(info, entry->d_un.d_ptr);
        break;
      default:
        break;
    }
  }
  if (!rela || relocations == 0 || symbols == 0 || names == 0 || kJumpSlot == 0) return 0;
  const auto* first = reinterpret_cast<const ElfW(Rela)*>(relocations);
  for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
    if (ELF64_R_TYPE(first[i].r_info) != kJumpSlot) continue;
    const auto* symbol = reinterpret_cast<const ElfW(Sym)*>(symbols) + ELF64_R_SYM(first[i].r_info);
    if (std::strcmp(reinterpret_cast<const char*>(names) + symbol->st_name, kSymbol) != 0) continue;
    const bool written =
        WriteSlot(info, info->dlpi_addr + first[i].r_offset, reinterpret_cast<uintptr_t>(&WellSeededThreadLocalNew64));
    search->result = written ? 1 : -1;
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace npu_bridge

int npu_bridge_unique_request_ids() {
  return npu_bridge::NoThrowValue<int>(-1, [] {
    npu_bridge::Search search;
    dl_iterate_phdr(npu_bridge::PatchObject, &search);
    return search.result;
  });
}
