# Sample programs to profile. -fno-inline and frame pointers keep the expected frames.
SAMPLE_CFLAGS := -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls \
		 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE

samples: $(BUILD)/samples/cpu_burn $(BUILD)/samples/libcpu_plugin.so

$(BUILD)/samples/cpu_burn: samples/cpu_burn.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAMPLE_CFLAGS) -o $@ $< -ldl -lpthread

$(BUILD)/samples/libcpu_plugin.so: samples/libcpu_plugin.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAMPLE_CFLAGS) -fPIC -shared -o $@ $<
