# CUDA samples (samples/*.cu -> $(BUILD)/samples/NAME). Included by the top Makefile when nvcc
# exists. Frame pointers and -g so launch stacks and symbols are complete in the host code;
# libcudart shared (not the nvcc default, static) so it stays a separate DSO like in real apps.
# No sibling calls: a launch_* function that ends in a launch would otherwise leave no frame.
# sm_90 SASS plus compute_90 PTX: the H100 runs the SASS, newer GPUs JIT the PTX.
CUDA_SAMPLE_SRC := $(wildcard samples/*.cu)
CUDA_SAMPLE_BIN := $(CUDA_SAMPLE_SRC:samples/%.cu=$(BUILD)/samples/%)
CUDA_ARCH ?= -gencode arch=compute_90,code=[sm_90,compute_90]
NVCC_FLAGS ?= -O2 -g $(CUDA_ARCH) -Xcompiler -fno-omit-frame-pointer,-fno-optimize-sibling-calls,-g -cudart shared

$(BUILD)/samples/%: samples/%.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCC_FLAGS) -o $@ $< -lcudart -ldl

# the same pipeline linked as nvcc links by default (cudart static, inside the executable):
# launch sites must be found by symbol there, not by file (tests/gpu/static_cudart.sh)
NVCC_STATIC_FLAGS := $(subst -cudart shared,-cudart static,$(NVCC_FLAGS))
$(BUILD)/samples/cuda_pipeline_static: samples/cuda_pipeline.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCC_STATIC_FLAGS) -o $@ $< -ldl

samples: $(CUDA_SAMPLE_BIN) $(BUILD)/samples/cuda_pipeline_static
