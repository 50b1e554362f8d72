// The emulated runtime's error calls: cudaGetLastError, cudaGetErrorName, cudaGetErrorString.
#include "tests/emulated_gpu/cudart/runtime_state.h"

EMU_CUDART_API cudaError_t cudaGetLastError(void) { return gpuscale_emu::cudart::take_last_error(); }

EMU_CUDART_API const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
#define X(name) \
  case name: return #name;
#include "tests/emulated_gpu/cudart/cuda_error_names.def"
#undef X
    default: return "cudaErrorUnknown";  // cudaGetErrorName: "cudaErrorInvalidValue" is not returned;
                                         // an unknown code gets a name rather than a null pointer
  }
}

// The runtime's descriptions of the errors this emulation returns (the text libcudart 13.0 prints, as
// gpuscale's messages show it: "cudaMalloc failed: out of memory (cudaErrorMemoryAllocation)"); the
// other codes print their name.
EMU_CUDART_API const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorPeerAccessAlreadyEnabled: return "peer access is already enabled";
    case cudaErrorPeerAccessUnsupported: return "peer access is not supported between these two devices";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
    default: return cudaGetErrorName(error);
  }
}
