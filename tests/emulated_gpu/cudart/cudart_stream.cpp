// Streams, events and graphs of the emulated libcudart.so.13 over the core's simulated clocks.
#include <cmath>

#include "tests/emulated_gpu/cudart/runtime_state.h"

using namespace gpuscale_emu;
using gpuscale_emu::cudart::Event;
using gpuscale_emu::cudart::result;

namespace {
Event* event(cudaEvent_t e) { return reinterpret_cast<Event*>(e); }
Graph* graph(cudaGraph_t g) { return reinterpret_cast<Graph*>(g); }
Graph* graph(cudaGraphExec_t g) { return reinterpret_cast<Graph*>(g); }
}  // namespace

EMU_CUDART_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int) {
  if (!pStream) return result(cudaErrorInvalidValue);
  if (cudart::sticky()) return result(cudart::sticky());
  if (!cudart::have_device()) return result(cudaErrorNoDevice);
  *pStream = reinterpret_cast<cudaStream_t>(new_stream(current_device()));
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!stream) return result(cudaErrorInvalidResourceHandle);
  delete_stream(cudart::stream(stream));
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (cudart::sticky()) return result(cudart::sticky());
  Stream* s = cudart::stream(stream);
  // a capturing stream cannot be synchronised (cudaStreamSynchronize's errors: the capture is
  // invalidated, cudaErrorStreamCaptureUnsupported)
  if (s->capture) return result(cudaErrorStreamCaptureUnsupported);
  wait_for(s->clock_us);
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaStreamQuery(cudaStream_t stream) {
  if (cudart::sticky()) return result(cudart::sticky());
  Stream* s = cudart::stream(stream);
  // cudaStreamQuery: "cudaErrorNotReady if not" all operations have completed. Work here has already
  // run on the host, so a query stands for a poll loop that spins until the stream's end: the host
  // clock moves there. Only an operation that never ends (an infinite clock) stays not ready.
  if (std::isinf(s->clock_us)) return cudaErrorNotReady;  // not an error: not recorded as the last one
  wait_for(s->clock_us);
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t ev, unsigned int) {
  if (cudart::sticky()) return result(cudart::sticky());
  if (!ev) return result(cudaErrorInvalidResourceHandle);
  Event* e = event(ev);
  Stream* s = cudart::stream(stream);
  // "Makes all future work submitted to stream wait for all work captured in event"; an event never
  // recorded is complete, so it orders nothing.
  Operation op;
  op.what = "cudaStreamWaitEvent";
  op.writes = std::vector<WriteRange>{};  // orders work, writes nothing
  op.finish = [e](double start) { return e->recorded ? std::max(start, e->time_us) : start; };
  if (s->capture) {
    s->capture->ops.push_back(std::move(op));
  } else if (e->recorded) {
    s->clock_us = std::max(s->clock_us, e->time_us);
  }
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaEventCreate(cudaEvent_t* ev) {
  if (!ev) return result(cudaErrorInvalidValue);
  auto* e = new Event;
  e->device = current_device();
  *ev = reinterpret_cast<cudaEvent_t>(e);
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaEventDestroy(cudaEvent_t ev) {
  if (!ev) return result(cudaErrorInvalidResourceHandle);
  delete event(ev);
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t stream) {
  if (cudart::sticky()) return result(cudart::sticky());
  if (!ev) return result(cudaErrorInvalidResourceHandle);
  Event* e = event(ev);
  Stream* s = cudart::stream(stream);
  // "Captures in event the contents of stream at the time of this call": the event completes when
  // the stream reaches it, at max(stream clock, host clock) (a marker costs the GPU no time).
  if (s->capture) {  // recorded into the graph: the event is set when the graph replays
    Operation op;
    op.what = "cudaEventRecord";
    op.writes = std::vector<WriteRange>{};
    op.finish = [e](double start) {
      e->recorded = true;
      e->time_us = start;
      return start;
    };
    s->capture->ops.push_back(std::move(op));
    return result(cudaSuccess);
  }
  s->clock_us = std::max(s->clock_us, host_clock_us());
  e->recorded = true;
  e->time_us = s->clock_us;
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaEventSynchronize(cudaEvent_t ev) {
  if (cudart::sticky()) return result(cudart::sticky());
  if (!ev) return result(cudaErrorInvalidResourceHandle);
  Event* e = event(ev);
  if (e->recorded) wait_for(e->time_us);  // an event never recorded: "returns cudaSuccess" at once
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (cudart::sticky()) return result(cudart::sticky());
  if (!ms || !start || !end) return result(cudaErrorInvalidValue);
  const Event* a = event(start);
  const Event* b = event(end);
  // cudaEventElapsedTime: "If cudaEventRecord() has not been called on either event, then
  // cudaErrorInvalidResourceHandle is returned. If ... one or both of them has not yet been completed
  // ..., cudaErrorNotReady is returned."
  if (!a->recorded || !b->recorded || !a->timing || !b->timing) return result(cudaErrorInvalidResourceHandle);
  if (a->time_us > host_clock_us() || b->time_us > host_clock_us()) return result(cudaErrorNotReady);
  *ms = static_cast<float>((b->time_us - a->time_us) / 1000.0);
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  if (cudart::sticky()) return result(cudart::sticky());
  // cudaStreamBeginCapture: "Capture may not be initiated if stream is cudaStreamLegacy"
  if (!stream || stream == cudaStreamLegacy) return result(cudaErrorStreamCaptureUnsupported);
  Stream* s = cudart::stream(stream);
  if (s->capture) return result(cudaErrorIllegalState);  // already capturing
  s->capture = new Graph;
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  if (!pGraph) return result(cudaErrorInvalidValue);
  Stream* s = cudart::stream(stream);
  // cudaStreamEndCapture: "cudaErrorIllegalState" when the stream is not capturing
  if (!s->capture) return result(cudaErrorIllegalState);
  *pGraph = reinterpret_cast<cudaGraph_t>(s->capture);
  s->capture = nullptr;
  return result(cudart::sticky() ? cudart::sticky() : cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t g, unsigned long long) {
  if (!pGraphExec || !g) return result(cudaErrorInvalidValue);
  if (cudart::sticky()) return result(cudart::sticky());
  // an executable graph is a snapshot: later changes to the graph do not reach it
  *pGraphExec = reinterpret_cast<cudaGraphExec_t>(new Graph(*graph(g)));
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (cudart::sticky()) return result(cudart::sticky());
  if (!exec) return result(cudaErrorInvalidValue);
  launch_graph(*graph(exec), cudart::stream(stream));
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  if (!g) return result(cudaErrorInvalidValue);
  delete graph(g);
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  if (!exec) return result(cudaErrorInvalidValue);
  delete graph(exec);
  return result(cudaSuccess);
}

// Not a CUDA function: the emulated node's simulated host clock, which the CUDA module's host clock
// (kernels/cuda/host_clock.h) reads where the loaded runtime exports it, so work it times on the host
// (nccl-tests' way: host clock, launches, a wait, host clock) lasts simulated time here.
extern "C" __attribute__((visibility("default"))) double gpuscale_emulated_host_clock_us() { return host_clock_us(); }
