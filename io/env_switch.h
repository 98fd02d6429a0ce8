// A behaviour switch read from the environment (MINRNN_STACKED_PACK, MINRNN_SIDE_WORK,
// MINRNN_READ_IN_PROCESS …): one of two named values, or a default where it is unset or empty;
// anything else is refused naming the variable, its value and what it takes.
#pragma once

namespace minrnn::io {

// Whether `name` is set to `on` (not to `off`), `otherwise` where unset or empty; `meaning` says
// what each value does in the refusal of another (std::invalid_argument "NAME=value: expected …").
bool env_switch(const char* name, bool otherwise, const char* off, const char* on,
                const char* meaning);

}  // namespace minrnn::io
