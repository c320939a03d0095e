// helpers_again.h — includes msl_helpers.h back (a cycle #pragma once ends).
#pragma once
#include "msl_helpers.h"
#define HELPERS_AGAIN_SEEN 1
