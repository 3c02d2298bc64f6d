/* Fuzz target for every YAML/JSON loader of the simulator: scenarios, model presets, Hugging Face
 * config.json and hardware presets. Any input must give 0 or a clean error, never a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw/hw.h"
#include "model/model.h"
#include "sim/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct err e;
	struct scenario s;
	(void)scenario_load_yaml(&s, "fuzz.yaml", text, size, &e);
	struct model *m = malloc(sizeof *m);
	if (m) {
		(void)model_load_yaml(m, "fuzz.yaml", text, size, &e);
		(void)model_load_hf_config(m, "fuzz.json", text, size, &e);
		free(m);
	}
	struct hw hw;
	(void)hw_load_yaml(&hw, "fuzz.yaml", text, size, &e);
	free(text);
	return 0;
}
