// A fake libnccl.so.2 with NCCL 2.18's functions (tests/fake_nccl/CMakeLists.txt says why). The names are
// those of 2.18.1's src/nccl.h.in; the bodies fail (ncclInternalError) except the two the loader calls
// when it names the library: ncclGetVersion, whose answer FAKE_NCCL_VERSION sets (default 21805, 2.18.5),
// and ncclGetErrorString.
#include <cstdlib>

#define FAKE_NCCL_API extern "C" __attribute__((visibility("default")))

namespace {
constexpr int kInternalError = 3;  // ncclInternalError
}

FAKE_NCCL_API int ncclGetVersion(int* version) {
  const char* v = std::getenv("FAKE_NCCL_VERSION");
  *version = v ? std::atoi(v) : 21805;
  return 0;
}

FAKE_NCCL_API const char* ncclGetErrorString(int) { return "fake NCCL: nothing runs here"; }
FAKE_NCCL_API const char* ncclGetLastError(void*) { return "fake NCCL: nothing runs here"; }

// Symbols only: their callers' arguments are ignored (C linkage carries no signature).
#define FAKE_NCCL_FAILS(name) \
  FAKE_NCCL_API int name() { return kInternalError; }
FAKE_NCCL_FAILS(ncclGetUniqueId)
FAKE_NCCL_FAILS(ncclCommInitRankConfig)
FAKE_NCCL_FAILS(ncclCommInitRank)
FAKE_NCCL_FAILS(ncclCommInitAll)
FAKE_NCCL_FAILS(ncclCommFinalize)
FAKE_NCCL_FAILS(ncclCommDestroy)
FAKE_NCCL_FAILS(ncclCommAbort)
FAKE_NCCL_FAILS(ncclCommSplit)
FAKE_NCCL_FAILS(ncclCommGetAsyncError)
FAKE_NCCL_FAILS(ncclCommCount)
FAKE_NCCL_FAILS(ncclCommCuDevice)
FAKE_NCCL_FAILS(ncclCommUserRank)
FAKE_NCCL_FAILS(ncclRedOpCreatePreMulSum)
FAKE_NCCL_FAILS(ncclRedOpDestroy)
FAKE_NCCL_FAILS(ncclReduce)
FAKE_NCCL_FAILS(ncclBcast)
FAKE_NCCL_FAILS(ncclBroadcast)
FAKE_NCCL_FAILS(ncclAllReduce)
FAKE_NCCL_FAILS(ncclReduceScatter)
FAKE_NCCL_FAILS(ncclAllGather)
FAKE_NCCL_FAILS(ncclSend)
FAKE_NCCL_FAILS(ncclRecv)
FAKE_NCCL_FAILS(ncclGroupStart)
FAKE_NCCL_FAILS(ncclGroupEnd)
