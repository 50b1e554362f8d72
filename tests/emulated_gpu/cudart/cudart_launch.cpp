// nvcc's registration and launch entry points and the occupancy query of the emulated libcudart.so.13.
// A launch runs the kernel's host twin (kernels/kernel_twin.h) at once and charges the stream the
// model's time for the bytes the twin says it moves (core/cost.h memory_us).
#include <algorithm>
#include <vector>

#include "tests/emulated_gpu/core/cost.h"
#include "tests/emulated_gpu/core/device_memory.h"
#include "tests/emulated_gpu/core/twin_registry.h"
#include "tests/emulated_gpu/cudart/runtime_state.h"

using namespace gpuscale_emu;
using gpuscale_emu::cudart::result;

// nvcc's entry points are declared only for nvcc's own compilation (/usr/local/cuda/include/
// crt/host_runtime.h: __cudaRegisterFatBinary, __cudaRegisterFatBinaryEnd, __cudaUnregisterFatBinary,
// __cudaRegisterFunction, __cudaPopCallConfiguration; crt/device_functions.h:
// __cudaPushCallConfiguration, __cudaGetKernel, __cudaLaunchKernel): the same declarations here.
extern "C" {
void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaRegisterFatBinaryEnd(void** fatCubinHandle);
void __cudaUnregisterFatBinary(void** fatCubinHandle);
void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun, const char* deviceName,
                            int thread_limit, uint3* tid, uint3* bid, dim3* bDim, dim3* gDim, int* wSize);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st* stream);
cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, void* stream);
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem,
                               cudaStream_t stream);
}

namespace {

struct CallConfiguration {
  dim3 grid, block;
  size_t shared = 0;
  cudaStream_t stream = nullptr;
};
thread_local std::vector<CallConfiguration> t_configurations;  // <<<>>> pushes, popped by the stub

const KernelTwin* twin_of(const std::string& name) {
  if (const KernelTwin* t = find_registered_twin(name.c_str())) return t;
#if GPUSCALE_EMU_HAVE_KERNEL_TWINS
  return find_kernel_twin(name.c_str());
#else
  return nullptr;  // the kernel twins library is not built yet
#endif
}

// CUDA C Programming Guide, "Compute Capabilities", technical specifications (9.0): at most 1024
// threads per block, block dimensions x, y <= 1024 and z <= 64, grid y and z <= 65535, x < 2^31.
bool valid_configuration(dim3 grid, dim3 block, const GpuModel& m) {
  const unsigned long long threads = 1ULL * block.x * block.y * block.z;
  if (threads == 0 || threads > static_cast<unsigned long long>(m.max_threads_per_block)) return false;
  if (block.x > 1024 || block.y > 1024 || block.z > 64) return false;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535 || grid.x > 2147483647u) return false;
  return true;
}

}  // namespace

EMU_CUDART_API void** __cudaRegisterFatBinary(void* fatCubin) {
  return new void*(fatCubin);  // the device code is not run: the handle only names the module
}

EMU_CUDART_API void __cudaRegisterFatBinaryEnd(void**) {}

EMU_CUDART_API void __cudaUnregisterFatBinary(void** fatCubinHandle) { delete fatCubinHandle; }

EMU_CUDART_API void __cudaRegisterFunction(void**, const char* hostFun, char* deviceFun, const char*, int, uint3*,
                                           uint3*, dim3*, dim3*, int*) {
  cudart::register_kernel(hostFun, deviceFun);  // host stub -> the kernel's mangled name
}

EMU_CUDART_API unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                    struct CUstream_st* stream) {
  t_configurations.push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

EMU_CUDART_API cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, void* stream) {
  if (t_configurations.empty()) return cudaErrorInvalidConfiguration;
  const CallConfiguration c = t_configurations.back();
  t_configurations.pop_back();
  *gridDim = c.grid;
  *blockDim = c.block;
  *sharedMem = c.shared;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

EMU_CUDART_API cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun) {
  const cudart::Kernel* k = cudart::kernel_of(hostFun);
  if (!kernel || !k) return result(cudaErrorInvalidDeviceFunction);
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<cudart::Kernel*>(k));
  return cudaSuccess;
}

EMU_CUDART_API cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                              size_t sharedMem, cudaStream_t stream) {
  if (cudart::sticky()) return result(cudart::sticky());
  if (!cudart::have_device()) return result(cudaErrorNoDevice);
  if (!kernel) return result(cudaErrorInvalidDeviceFunction);
  const auto* k = reinterpret_cast<const cudart::Kernel*>(kernel);
  Stream* s = cudart::stream(stream);
  const Device& d = device(s->device);
  // cudaLaunchKernel: "cudaErrorInvalidConfiguration" for a grid or block the device cannot run; a
  // launch error, not sticky (CUDA Runtime API, cudaGetLastError: it is returned once and cleared)
  if (!valid_configuration(gridDim, blockDim, d.model)) return result(cudaErrorInvalidConfiguration);
  const KernelTwin* twin = twin_of(k->device_name);
  if (!twin) return result(cudaErrorInvalidDeviceFunction);  // no code for this device (no host twin)
  // A captured launch would have to keep its arguments, whose sizes a twin does not give: refused
  // (an emulation limit, not CUDA's; gpuscale captures only cuBLASLt products).
  if (s->capture) return result(cudaErrorStreamCaptureUnsupported);
  LaunchShape shape;
  shape.grid[0] = gridDim.x, shape.grid[1] = gridDim.y, shape.grid[2] = gridDim.z;
  shape.block[0] = blockDim.x, shape.block[1] = blockDim.y, shape.block[2] = blockDim.z;
  shape.shared_bytes = sharedMem;
  Operation op;
  op.what = "kernel " + k->device_name;
  op.kind = Operation::Kind::memory;
  op.launch = true;
  const double bytes = twin->bytes_moved(shape, args);
  op.duration_us = memory_us(bytes, d);
  if (twin->writes) op.writes = twin->writes(shape, args);
  if (twin->writes && twin->reads) {  // bytes in another GPU's memory go over the link (cost.h)
    double peer_bytes = 0;
    int peer = -1;
    std::vector<WriteRange> touched = *op.writes;
    for (const WriteRange& r : twin->reads(shape, args)) touched.push_back(r);
    for (const WriteRange& r : touched)
      if (const Allocation* a = find_allocation(r.data); a && a->device != s->device) {
        peer_bytes += static_cast<double>(r.bytes);
        peer = a->device;
      }
    if (peer >= 0) op.duration_us = kernel_us(bytes - peer_bytes, peer_bytes, d, device(peer));
  }
  op.work = [twin, shape, args] { twin->run(shape, args); };  // runs inside enqueue: args still live
  enqueue(s, std::move(op));
  // A fault in the kernel itself (a planted sticky error) is asynchronous: the launch succeeded, and
  // the error comes from the next call (CUDA Runtime API, "Error Handling": "kernel launches are
  // asynchronous ... errors ... reported by a subsequent unrelated runtime call").
  return cudaSuccess;
}

EMU_CUDART_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func,
                                                                                   int blockSize,
                                                                                   size_t dynamicSMemSize,
                                                                                   unsigned int) {
  if (!numBlocks || blockSize <= 0) return result(cudaErrorInvalidValue);
  if (!cudart::kernel_of(func)) return result(cudaErrorInvalidDeviceFunction);
  if (!cudart::have_device()) return result(cudaErrorNoDevice);
  const GpuModel& m = device(current_device()).model;
  // Without the kernel's register count, the limits the model knows: blocks per SM, threads per SM
  // (2048 at 9.0) and shared memory per SM (228 KB, 1 KB reserved per block): CUDA C Programming
  // Guide, "Compute Capabilities", technical specifications 9.0.
  long blocks = blockSize > m.max_threads_per_block ? 0 : std::min<long>(m.max_blocks_per_sm, 2048 / blockSize);
  if (dynamicSMemSize > 0)
    blocks = std::min<long>(blocks, static_cast<long>((228u << 10) / (dynamicSMemSize + (1u << 10))));
  *numBlocks = static_cast<int>(blocks);
  return result(cudaSuccess);
}
