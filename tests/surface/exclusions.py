"""What of torch's public surface jitgrad leaves out, one family per reason.

Each family is a reason and the patterns (``re.search`` on the name) it covers in given
namespaces (``"*"``: all). A name in ``torch_surface.json`` that no family matches is in scope:
``test_surface_coverage.py`` counts it against jitgrad.
"""
import re

ALL = "*"
FAMILIES = [
    ("quantized tensors: jitgrad computes in float64/float32 only",
     ALL, r"quant|^q_|qscheme|qint|quint|int_repr|^fbgemm|dequantize|choose_qparams"),
    ("sparse layouts: jitgrad tensors are dense NumPy/CUDA arrays",
     ALL, r"sparse|_coo|coo_|csr|csc|bsr|bsc|^crow_|^ccol_|^col_indices|^row_indices|^indices$"
          r"|^values$|_nnz|^smm$|^sspaddmm$|^hspmm$|^saddmm$|^dsmm$|^spmm$|^hsmm$|coalesce"
          r"|^dense_dim$|^to_dense$|^is_sparse|^indices_copy$|^values_copy$"),
    ("vendor back ends and device plumbing (cuDNN, MIOpen, MKL-DNN, MPS, XPU, IPU, Vulkan, pinned "
     "and shared memory, streams/events): jitgrad's devices are cpu and cuda via Numba",
     ALL, r"cudnn|miopen|mkldnn|mkl|_mps|^mps|xpu|ipu|hpu|mtia|maia|vulkan|nnpack|^is_meta$"
          r"|pin_memory|is_pinned|share_memory|is_shared|record_stream|^Stream|^Event$|has_lapack"
          r"|has_openmp|has_spectral|^is_ort$|^is_xla$|^get_device$|AcceleratorError"
          r"|OutOfMemoryError|^cuda$|^is_cuda$|^get_device_module$|^init_num_threads$"),
    ("TorchScript, FX, export and torch.compile internals",
     ALL, r"Script|^JIT|Graph|Type$|^Block$|^Node$|^Value$|^Use$|AliasDb|ArgumentSpec|^Argument$"
          r"|CompilationUnit|^Code$|CallStack|ConcreteModule|FileCheck|FunctionSchema|ErrorReport"
          r"|ExecutionPlan|StaticModule|TracingState|^Gradient$|IODescriptor|Logger$|DeepCopyMemo"
          r"|^Capsule$|PyTorchFile|StorageContext|ThroughputBenchmark|^Benchmark|AggregationType"
          r"|^AVG$|^SUM$|^Future|^Await|OperatorInfo|^Tag$|DispatchKey|DisableTorchFunction"
          r"|^Sym|^sym_|^ModuleDict$|^ParameterDict$|^BufferDict$|^FatalError$|^has_torch_function"
          r"|handle_torch_function|boolean_dispatch|^fork$|^wait$|^import_ir_module|^parse_ir$"
          r"|^parse_schema$|^parse_type_comment$|^merge_type_from_type_comment$"
          r"|^unify_type_list$|^nonzero_static$"),
    ("einops' pattern language (torch.func.rearrange wraps the einops package)", "torch.func",
     r"^rearrange$"),
    ("storage and memory layout (strides are NumPy's; no storages or memory formats)",
     ALL, r"[Ss]torage|^from_file$|^data_ptr$|^memory_format$|^layout$|resize_as_|^set_$|^is_set_to$"
          r"|^as_strided_$|^untyped|convert_conv.d_weight_memory_format|^nbytes$|^itemsize$"),
    ("named and nested tensors",
     ALL, r"^refine_names$|^rename_?$|^align_to$|^align_as$|^names$|^has_names$|nested"),
    ("automatic mixed precision and sub-byte / 8-bit / bfloat16 dtypes NumPy has no type for",
     ALL, r"autocast|GradScaler|bfloat16|^float8|^float4|^bits|^int[1-7]$|^uint[1-7]$|^chalf$|^bit$"
          r"|complex32|^half$|^float16$"),
    ("unsigned 32- and 64-bit integers: jitgrad refuses them at construction (their promotion "
     "with int64 differs between NumPy and PyTorch)", ALL, r"^uint32$|^uint64$"),
    ("distributed training (jitgrad.distributed is Dask-based and has its own API)",
     ALL, r"distributed|DataParallel|SyncBatchNorm|DistributedSampler|^is_distributed$"),
    ("legacy typed-tensor classes and removed APIs (PyTorch raises or warns on them)",
     ALL, r"^(Bool|Byte|Char|Double|Float|Int|Long|Short)Tensor$|^symeig$|^eig$|^lstsq$|^solve$"
          r"|^reinforce$|^map2_$|^volatile$|^resize$|^NLLLoss2d$|^Container$|^upsample"
          r"|^set_multithreading_enabled$|enforce_grad_layout_policy|^NestedIOFunction$"),
    ("recurrent and transformer layers (sequence-model zoo, not scientific-autograd surface)",
     "torch torch.nn torch.nn.functional",
     r"^(RNN|LSTM|GRU)|Transformer|Multihead|multi_head_attention|^(rnn|lstm|gru)|CTCLoss"
     r"|ctc_loss|AdaptiveLogSoftmax|EmbeddingBag|embedding_bag|CrossMapLRN2d|LinearCrossEntropy"
     r"|linear_cross_entropy|grouped_mm|scaled_mm|Lazy|Uninitialized"),
    ("undocumented top-level kernel entry points (PyTorch documents them as Tensor methods or "
     "torch.nn.functional)", "torch", None),
    ("typing names and datapipes re-exported by a module (not part of its API)",
     "torch.nn.functional torch.fft torch.utils.data torch.nn",
     r"^(Callable|DType|Optional|ScalingType|SwizzleType|Tensor|assert_int_or_pair)$|DataPipe"
     r"|^DataChunk$|datapipe|^argument_validation$|^non_deterministic$|^runtime_validation"
     r"|^factory_kwargs$"),
    ("optimizers for sparse gradients or large-model training (need sparse tensors or 2-D "
     "orthogonalisation of whole layers)", "torch.optim", r"^SparseAdam$|^Muon$|^Adafactor$"
     r"|^swap_in_optimizer"),
]

# top-level functions PyTorch leaves undocumented but which tutorials call as ``torch.X``
UNDOCUMENTED_KEPT = {"relu", "detach", "masked_fill", "log_softmax", "selu", "celu", "Generator",
                     "Size", "device",
                     "dtype", "finfo", "iinfo", "Tensor", "scalar_tensor", "rsub", "is_signed",
                     "clamp_min", "clamp_max"}


def excluded(namespace, name, entry):
    """The reason ``namespace.name`` is out of scope, or None when it is in scope."""
    for reason, namespaces, pattern in FAMILIES:
        if namespaces != ALL and namespace not in namespaces.split():
            continue
        if pattern is None:
            if (not entry["documented"] and entry["kind"] != "value"
                    and name not in UNDOCUMENTED_KEPT):
                return reason
        elif re.search(pattern, name):
            return reason
    return None
