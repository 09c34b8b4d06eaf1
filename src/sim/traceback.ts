// Python tracebacks of SGLang's failure modes, as the scheduler process prints them (pure text).
import { NOT_ENOUGH_MEMORY_MSG } from './log-format.js';

/** Where the simulated SGLang checkout lives (the seed's layout). */
const SRT = '/root/sglang-main/python/sglang/srt';

// `  File "...", line N, in fn` plus its source line (and caret line for a call spanning the expression).
function renderFrame(file: string, line: number, fn: string, code: string, caret?: string): string[] {
  const out = [`  File "${SRT}/${file}", line ${line}, in ${fn}`, `    ${code}`];
  if (caret) out.push(caret);
  return out;
}

// Frames from the scheduler process entry down to ModelRunner construction (seed: tp_worker.py:258 → :341).
function schedulerInitFrames(): string[] {
  return [
    ...renderFrame(
      'managers/scheduler.py',
      2996,
      'run_scheduler_process',
      'scheduler = Scheduler(',
      '                ^^^^^^^^^^',
    ),
    ...renderFrame('managers/scheduler.py', 348, '__init__', 'self.init_model_worker()'),
    ...renderFrame(
      'managers/scheduler.py',
      517,
      'init_model_worker',
      'self.tp_worker = TpModelWorker(',
      '                     ^^^^^^^^^^^^^^',
    ),
    ...renderFrame('managers/tp_worker.py', 258, '__init__', 'self._init_model_runner()'),
    ...renderFrame(
      'managers/tp_worker.py',
      341,
      '_init_model_runner',
      'self._model_runner = ModelRunner(',
      '                         ^^^^^^^^^^^^',
    ),
  ];
}

// `Scheduler hit an exception: Traceback ...` ending in the KV-pool RuntimeError (start-up, exit 1).
export function renderNotEnoughMemory(): string {
  return [
    'Scheduler hit an exception: Traceback (most recent call last):',
    ...schedulerInitFrames(),
    ...renderFrame('model_executor/model_runner.py', 374, '__init__', 'self.initialize(min_per_gpu_memory)'),
    ...renderFrame('model_executor/model_runner.py', 551, 'initialize', 'self.init_memory_pool('),
    ...renderFrame(
      'model_executor/model_runner_kv_cache_mixin.py',
      412,
      'init_memory_pool',
      'self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)',
      '                               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
    ),
    ...renderFrame(
      'model_executor/model_runner_kv_cache_mixin.py',
      118,
      'profile_max_num_token',
      'raise RuntimeError(',
    ),
    `RuntimeError: ${NOT_ENOUGH_MEMORY_MSG}`,
  ].join('\n');
}

// Frames of a running scheduler's event loop down to the model forward.
function forwardFrames(): string[] {
  return [
    ...renderFrame('managers/scheduler.py', 3003, 'run_scheduler_process', 'scheduler.event_loop_overlap()'),
    ...renderFrame(
      'managers/scheduler.py',
      1089,
      'event_loop_overlap',
      'batch_result = self.run_batch(batch)',
      '                   ^^^^^^^^^^^^^^^^^^^^',
    ),
    ...renderFrame(
      'managers/scheduler.py',
      2161,
      'run_batch',
      'batch_result = self.model_worker.forward_batch_generation(',
      '                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
    ),
    ...renderFrame(
      'speculative/eagle_worker.py',
      309,
      'forward_batch_generation',
      'logits_output, verify_output, model_worker_batch, _ = self.verify(',
      '                                                            ^^^^^^^^^^^^',
    ),
  ];
}

// A CUDA illegal memory access in the running scheduler (the crash-after fault).
export function renderIllegalMemoryAccess(): string {
  return [
    'Scheduler hit an exception: Traceback (most recent call last):',
    ...forwardFrames(),
    ...renderFrame(
      'speculative/eagle_worker.py',
      702,
      'verify',
      'res: EagleVerifyOutput = spec_info.verify(',
      '                            ^^^^^^^^^^^^^^^^^',
    ),
    'RuntimeError: CUDA error: an illegal memory access was encountered',
    'CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.',
    'For debugging consider passing CUDA_LAUNCH_BLOCKING=1',
    'Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.',
  ].join('\n');
}

// torch's allocator OOM during a large decode batch (the cuda-oom-batch fault); sizes in GiB per GPU.
export function renderCudaOom(tryGib: number, totalGib: number, freeMib: number, inUseGib: number): string {
  return [
    'Scheduler hit an exception: Traceback (most recent call last):',
    ...forwardFrames(),
    ...renderFrame(
      'model_executor/model_runner.py',
      1893,
      'forward_extend',
      'return self.model.forward(',
      '           ^^^^^^^^^^^^^^^^^^',
    ),
    `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tryGib.toFixed(2)} GiB. GPU 0 has a total capacity of ` +
      `${totalGib.toFixed(2)} GiB of which ${freeMib.toFixed(2)} MiB is free. Including non-PyTorch memory, this process has ` +
      `${inUseGib.toFixed(2)} GiB memory in use. Of the allocated memory ${(inUseGib - 1.2).toFixed(2)} GiB is allocated by PyTorch, ` +
      'and 612.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting ' +
      'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  ' +
      '(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)',
  ].join('\n');
}

// The scheduler watchdog's message when one batch made no progress (the hang fault).
export function renderWatchdogTimeout(timeoutS: number): string {
  return `Watchdog timeout (self.watchdog_timeout=${timeoutS})`;
}

// PyTorch ProcessGroupNCCL's watchdog lines for a collective that never completed (peer node died).
export function renderNcclWatchdog(
  rank: number,
  seq: number,
  timeoutMs: number,
  ranMs: number,
  glogStamp: string,
): string[] {
  const p = `[rank${rank}]:[E${glogStamp} ProcessGroupNCCL.cpp:629]`;
  const work = `WorkNCCL(SeqNum=${seq}, OpType=ALLREDUCE, NumelIn=2048, NumelOut=2048, Timeout(ms)=${timeoutMs})`;
  return [
    `${p} [Rank ${rank}] Watchdog caught collective operation timeout: ${work} ran for ${ranMs} milliseconds before timing out.`,
    `${p} [Rank ${rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.`,
    `${p} [Rank ${rank}] To avoid data inconsistency, we are taking the entire process down.`,
    `terminate called after throwing an instance of 'c10::DistBackendError'`,
    `  what():  [PG ID 0 PG GUID 0(default_pg) Rank ${rank}] Process group watchdog thread terminated with exception: [Rank ${rank}] Watchdog caught collective operation timeout: ${work} ran for ${ranMs} milliseconds before timing out.`,
  ];
}

// uvicorn's bind failure when the port is taken (errno 98 on Linux).
export function renderAddressInUse(host: string, port: number): string {
  return `[Errno 98] error while attempting to bind on address ('${host}', ${port}): address already in use`;
}

// glog-style `MMDD HH:MM:SS.micro` stamp used by PyTorch's C++ logs.
export function formatGlogStamp(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getMonth() + 1)}${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds() * 1000, 6)}`;
}
