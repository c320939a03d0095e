/* cli.c — subcommand dispatch, `gdnbench --help`, `list` and `info`. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "core/chips.h"
#include "core/version.h"
#include "io/io_util.h"
#include "ops/op.h"
#include "runner/backend.h"
#include "runner/host.h"

static int is_directory(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void print_usage(FILE *f) {
    fprintf(f,
            "gdnbench — benchmark and validate Metal compute kernels (Gated DeltaNet, attention)\n\n"
            "usage:\n"
            "  gdnbench <op> [options]     run an op: check against CPU references, time it\n"
            "  gdnbench list               ops with descriptions and default shapes\n"
            "  gdnbench info               host, available backends, device\n"
            "  gdnbench suite NAME         a named set of cases (qwen35, smoke)\n"
            "  gdnbench validate <op>      sweep shapes, schedules and stress inputs on the software device\n"
            "  gdnbench compare BASE NEW   regressions between two reports (or directories)\n"
            "  gdnbench report DIR...      per-op tables and charts across devices\n"
            "  gdnbench compile FILE.metal compile a kernel library on the software device, list its kernels\n"
            "  gdnbench kernel CASE.json   any kernel with its own buffers, from a case file (or flags)\n"
            "  gdnbench validate CASE.json a kernel case under every schedule, full checks (software device)\n"
            "  gdnbench suite DIR          every *.json kernel case in DIR\n"
            "  gdnbench <op> --help        the op's dimensions, buffers, tolerances and options\n\n"
            "example:\n"
            "  gdnbench kkt --T 4096\n"
            "  gdnbench chunk_fwd --T 64..4096:x4 --H 32 --Hg 16 --json out.json\n\n"
            "exit status: 0 all good, 1 a check or comparison failed, 2 bad input or could not run\n");
}

int cmd_list(int argc, char **argv) {
    const char *group = NULL;
    int width = 12; /* the longest op name, so summaries line up */
    for (int i = 0; op_table[i]; i++)
        if ((int)strlen(op_table[i]->name) > width) width = (int)strlen(op_table[i]->name);
    for (int i = 0; op_table[i]; i++) {
        const op_desc *op = op_table[i];
        if (!group || strcmp(group, op->group) != 0) {
            group = op->group;
            printf("%s%s:\n", i ? "\n" : "", group);
        }
        int64_t dim[OP_MAX_DIMS];
        for (int d = 0; d < op->ndims; d++) dim[d] = op->dims[d].def;
        char shape[256];
        table_shape_str(op, dim, shape, sizeof shape);
        printf("  %-*s %s\n  %-*s default: %s\n", width, op->name, op->summary, width, "", shape);
    }
    return EXIT_OK;
}

int cmd_info(int argc, char **argv) {
    char cpu[128], os[64], kern[128], err[256];
    host_cpu_name(cpu, sizeof cpu);
    host_os(os, sizeof os);
    host_kernel(kern, sizeof kern);
    printf("host:     %s %s, %s, %d cores\n", os, kern, cpu, host_cores());
    printf("backends (default %s):\n", backend_default_name());
    static const backend_kind kinds[] = {BACKEND_CPU, BACKEND_SW, BACKEND_METAL};
    for (int i = 0; i < 3; i++) {
        const char *name = backend_desc_of(kinds[i])->name;
        backend *b = backend_open(name, NULL, err, sizeof err);
        if (b) {
            printf("  %-6s available: %s%s\n", name, b->device_name,
                   backend_has(b, BACKEND_EMULATED) ? " (emulated)" : "");
            if (!backend_has(b, BACKEND_EMULATED) && chip_is_paravirtual(b->device_name))
                printf("         WARNING %s\n", chip_paravirtual_warning());
            if (backend_has(b, BACKEND_GPU)) {
                const chip_info *chip = chip_find(b->device_name, b->gpu_cores);
                const char *derived = !chip                                               ? ""
                                      : !chip->bandwidth_verified && !chip->flops_verified ? "bandwidth and FLOP/s"
                                      : !chip->bandwidth_verified                           ? "bandwidth"
                                      : !chip->flops_verified                               ? "FLOP/s"
                                                                                            : "";
                if (chip)
                    printf("         chip table: %s, %d GPU cores, %.0f GB/s, FP32 %.1f TFLOP/s, FP16 %.1f TFLOP/s%s%s%s\n",
                           chip->name, chip->gpu_cores, chip->bandwidth_gbps, chip->fp32_tflops, chip->fp16_tflops,
                           derived[0] ? " (" : "", derived, derived[0] ? " derived, not Apple-published)" : "");
                else
                    printf("         chip table: no entry for '%s': peaks unknown, %% of peak not reported\n",
                           b->device_name);
            }
            b->destroy(b);
        } else {
            printf("  %-6s not available: %s\n", name, err);
        }
    }
    return EXIT_OK;
}

int cli_main(int argc, char **argv) {
    if (argc < 2) {
        print_usage(stderr);
        return EXIT_BAD_INPUT;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        print_usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        if (gdnbench_git_sha[0]) printf("gdnbench %s (git %s)\n", gdnbench_version, gdnbench_git_sha);
        else printf("gdnbench %s (commit unknown)\n", gdnbench_version);
        return EXIT_OK;
    }
    if (strcmp(cmd, "list") == 0) return cmd_list(argc, argv);
    if (strcmp(cmd, "info") == 0) return cmd_info(argc, argv);
    /* a case file or a directory of them: kernel cases (cmd_kernel.c) */
    int case_arg = argc > 2 && (io_has_suffix(argv[2], ".json") || is_directory(argv[2]));
    if (strcmp(cmd, "suite") == 0) return case_arg ? cmd_kernel_suite(argc - 1, argv + 1) : cmd_suite(argc, argv);
    if (strcmp(cmd, "validate") == 0)
        return case_arg ? cmd_kernel_validate(argc - 1, argv + 1) : cmd_validate(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0) return cmd_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0) return cmd_report(argc - 1, argv + 1);
    if (strcmp(cmd, "compile") == 0) return cmd_compile(argc - 1, argv + 1);
    if (strcmp(cmd, "kernel") == 0) return cmd_kernel(argc - 1, argv + 1);
    const op_desc *op = op_find(cmd);
    if (op) return cmd_run(op, argc, argv);
    fprintf(stderr, "gdnbench: unknown command or op '%s': see `gdnbench list` for ops, `gdnbench --help` for commands\n",
            cmd);
    return EXIT_BAD_INPUT;
}
