#pragma once
// The slice of NVML's C API that gpuscale uses, declared from NVIDIA's public API reference (nvml.h is
// not installed on build machines, and gpuscale never links libnvidia-ml: it loads it at run time,
// health/nvml/nvml_library.h). Only the types, constants and entry points used are declared; each is
// looked up with dlsym, and a missing one only marks its fields "unsupported".
//
// Layouts and values follow the NVML API reference (R525-R580). Enums are passed as int, as C does.
// The fake NVML of the tests (tests/fake_nvml) defines the same entry points from this list, so the
// compiler checks that both sides agree on every signature.

namespace gpuscale::nvml {

using nvmlReturn_t = int;
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_RESET_REQUIRED = 16;
inline constexpr nvmlReturn_t NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_NOT_FOUND = 28;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;

using nvmlEnableState_t = int;  // NVML_FEATURE_DISABLED 0, NVML_FEATURE_ENABLED 1
inline constexpr nvmlEnableState_t NVML_FEATURE_DISABLED = 0;
inline constexpr nvmlEnableState_t NVML_FEATURE_ENABLED = 1;

using nvmlClockType_t = int;
inline constexpr nvmlClockType_t NVML_CLOCK_SM = 1;
inline constexpr nvmlClockType_t NVML_CLOCK_MEM = 2;

using nvmlTemperatureSensors_t = int;
inline constexpr nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0;

using nvmlMemoryErrorType_t = int;
inline constexpr nvmlMemoryErrorType_t NVML_MEMORY_ERROR_TYPE_CORRECTED = 0;
inline constexpr nvmlMemoryErrorType_t NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;

using nvmlEccCounterType_t = int;
inline constexpr nvmlEccCounterType_t NVML_VOLATILE_ECC = 0;
inline constexpr nvmlEccCounterType_t NVML_AGGREGATE_ECC = 1;

using nvmlPageRetirementCause_t = int;
inline constexpr nvmlPageRetirementCause_t NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0;
inline constexpr nvmlPageRetirementCause_t NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1;

using nvmlGpuVirtualizationMode_t = int;  // NONE 0, PASSTHROUGH 1, VGPU (a guest) 2, HOST_VGPU 3, HOST_VSGA 4

using nvmlComputeMode_t = int;
inline constexpr nvmlComputeMode_t NVML_COMPUTEMODE_DEFAULT = 0;
inline constexpr nvmlComputeMode_t NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1;
inline constexpr nvmlComputeMode_t NVML_COMPUTEMODE_PROHIBITED = 2;
inline constexpr nvmlComputeMode_t NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3;

using nvmlNvLinkErrorCounter_t = int;  // DL_REPLAY 0, DL_RECOVERY 1, DL_CRC_FLIT 2, DL_CRC_DATA 3
inline constexpr int NVML_NVLINK_ERROR_COUNTERS = 4;
inline constexpr unsigned NVML_NVLINK_MAX_LINKS = 18;

inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8ULL;

// Buffer sizes (including the terminating NUL), from nvmlConstants.
inline constexpr unsigned NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_DEVICE_SERIAL_BUFFER_SIZE = 30;
inline constexpr unsigned NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
inline constexpr unsigned NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;

struct nvmlPciInfo_t {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;     // 16-bit device id << 16 | 16-bit vendor id
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "00000000:18:00.0"
};

struct nvmlUtilization_t {
  unsigned int gpu;     // % of the last sample period with a kernel running
  unsigned int memory;  // % of it with device memory being read or written
};

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlProcessInfo_t {  // nvmlProcessInfo_v2_t, as nvmlDeviceGetComputeRunningProcesses_v3 fills it
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the Xid for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

struct nvmlDeviceAttributes_t {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};

// Every entry point gpuscale uses: X(name, parameter list). All return nvmlReturn_t.
// nvmlDeviceGetCurrentClocksThrottleReasons is the pre-R535 name of the clock event reasons (same value).
#define GPUSCALE_NVML_FUNCTIONS(X)                                                                              \
  X(nvmlInit_v2, (void))                                                                                        \
  X(nvmlShutdown, (void))                                                                                       \
  X(nvmlSystemGetDriverVersion, (char* version, unsigned int length))                                          \
  X(nvmlSystemGetNVMLVersion, (char* version, unsigned int length))                                            \
  X(nvmlSystemGetCudaDriverVersion_v2, (int* cudaDriverVersion))                                               \
  X(nvmlDeviceGetCount_v2, (unsigned int* deviceCount))                                                        \
  X(nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t* device))                                \
  X(nvmlDeviceGetName, (nvmlDevice_t device, char* name, unsigned int length))                                \
  X(nvmlDeviceGetUUID, (nvmlDevice_t device, char* uuid, unsigned int length))                                \
  X(nvmlDeviceGetSerial, (nvmlDevice_t device, char* serial, unsigned int length))                            \
  X(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t* pci))                                       \
  X(nvmlDeviceGetCudaComputeCapability, (nvmlDevice_t device, int* major, int* minor))                         \
  X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t* memory))                                     \
  X(nvmlDeviceGetClockInfo, (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock))                 \
  X(nvmlDeviceGetMaxClockInfo, (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock))              \
  X(nvmlDeviceGetTemperature, (nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* temp))     \
  X(nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int* milliwatts))                                 \
  X(nvmlDeviceGetEnforcedPowerLimit, (nvmlDevice_t device, unsigned int* milliwatts))                         \
  X(nvmlDeviceGetPowerManagementDefaultLimit, (nvmlDevice_t device, unsigned int* milliwatts))                \
  X(nvmlDeviceGetTotalEnergyConsumption, (nvmlDevice_t device, unsigned long long* millijoules))              \
  X(nvmlDeviceGetUtilizationRates, (nvmlDevice_t device, nvmlUtilization_t* utilization))                     \
  X(nvmlDeviceGetCurrentClocksEventReasons, (nvmlDevice_t device, unsigned long long* reasons))               \
  X(nvmlDeviceGetCurrentClocksThrottleReasons, (nvmlDevice_t device, unsigned long long* reasons))            \
  X(nvmlDeviceGetEccMode, (nvmlDevice_t device, nvmlEnableState_t* current, nvmlEnableState_t* pending))      \
  X(nvmlDeviceGetTotalEccErrors, (nvmlDevice_t device, nvmlMemoryErrorType_t errorType,                        \
                                  nvmlEccCounterType_t counterType, unsigned long long* count))               \
  X(nvmlDeviceGetRetiredPages, (nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int* pageCount, \
                                unsigned long long* addresses))                                               \
  X(nvmlDeviceGetRetiredPagesPendingStatus, (nvmlDevice_t device, nvmlEnableState_t* isPending))              \
  X(nvmlDeviceGetRemappedRows, (nvmlDevice_t device, unsigned int* corrRows, unsigned int* uncRows,           \
                                unsigned int* isPending, unsigned int* failureOccurred))                      \
  X(nvmlDeviceGetCurrPcieLinkGeneration, (nvmlDevice_t device, unsigned int* gen))                            \
  X(nvmlDeviceGetMaxPcieLinkGeneration, (nvmlDevice_t device, unsigned int* gen))                             \
  X(nvmlDeviceGetCurrPcieLinkWidth, (nvmlDevice_t device, unsigned int* width))                               \
  X(nvmlDeviceGetMaxPcieLinkWidth, (nvmlDevice_t device, unsigned int* width))                                \
  X(nvmlDeviceGetPcieReplayCounter, (nvmlDevice_t device, unsigned int* value))                               \
  X(nvmlDeviceGetNvLinkState, (nvmlDevice_t device, unsigned int link, nvmlEnableState_t* isActive))         \
  X(nvmlDeviceGetNvLinkErrorCounter, (nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter, \
                                      unsigned long long* value))                                             \
  X(nvmlDeviceGetPersistenceMode, (nvmlDevice_t device, nvmlEnableState_t* mode))                             \
  X(nvmlDeviceGetComputeMode, (nvmlDevice_t device, nvmlComputeMode_t* mode))                                 \
  X(nvmlDeviceGetVirtualizationMode, (nvmlDevice_t device, nvmlGpuVirtualizationMode_t* mode))              \
  X(nvmlDeviceGetComputeRunningProcesses_v3, (nvmlDevice_t device, unsigned int* infoCount,                    \
                                              nvmlProcessInfo_t* infos))                                      \
  X(nvmlDeviceGetMigMode, (nvmlDevice_t device, unsigned int* currentMode, unsigned int* pendingMode))        \
  X(nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t device, unsigned int* count))                               \
  X(nvmlDeviceGetMigDeviceHandleByIndex, (nvmlDevice_t device, unsigned int index, nvmlDevice_t* migDevice))  \
  X(nvmlDeviceGetGpuInstanceId, (nvmlDevice_t device, unsigned int* id))                                      \
  X(nvmlDeviceGetComputeInstanceId, (nvmlDevice_t device, unsigned int* id))                                  \
  X(nvmlDeviceGetAttributes_v2, (nvmlDevice_t device, nvmlDeviceAttributes_t* attributes))                    \
  X(nvmlEventSetCreate, (nvmlEventSet_t * set))                                                               \
  X(nvmlDeviceGetSupportedEventTypes, (nvmlDevice_t device, unsigned long long* eventTypes))                  \
  X(nvmlDeviceRegisterEvents, (nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set))      \
  X(nvmlEventSetWait_v2, (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int timeoutms))               \
  X(nvmlEventSetFree, (nvmlEventSet_t set))

// The table of entry points as loaded: a null pointer is a symbol the library lacks.
struct Api {
#define GPUSCALE_NVML_POINTER(name, params) nvmlReturn_t(*name) params = nullptr;
  GPUSCALE_NVML_FUNCTIONS(GPUSCALE_NVML_POINTER)
#undef GPUSCALE_NVML_POINTER
};

}  // namespace gpuscale::nvml
