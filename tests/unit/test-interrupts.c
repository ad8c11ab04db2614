/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/interrupts as the kernel prints it (kernel/irq/proc.c show_interrupts()): the
 * action names of each numbered IRQ, and lookup by number. */
#include <stdlib.h>
#include <unistd.h>

#include "faketree.h"
#include "host/host.h"
#include "host/interrupts.h"
#include "basic/macro.h"
#include "tap.h"

/* Captured from an x86 laptop and trimmed; IRQ numbers deliberately out of order at the end
 * (the kernel prints them ascending, but the table must not rely on it). */
static const char x86_two_cpus[] =
        "           CPU0       CPU1       \n"
        "  0:         45          0   IO-APIC   2-edge      timer\n"
        "  1:          0       9213   IO-APIC   1-edge      i8042\n"
        "  8:          0          0   IO-APIC   8-edge      rtc0\n"
        "  9:          0      14561   IO-APIC   9-fasteoi   acpi\n"
        " 18:          7          0   IO-APIC  18-fasteoi   i8042, rtc0\n"
        " 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n"
        "120:          0          0   PCI-MSI 16384-edge      aerdrv\n"
        "131:   12345678          0  PCI-MSIX-0000:03:00.0   0-edge      eth0-TxRx-0\n"
        "132:          0   87654321  PCI-MSIX-0000:03:00.0   1-edge      eth0-TxRx-1\n"
        "133:          3          0  PCI-MSIX-0000:03:00.0   2-edge      eth0\n"
        " 40:          0        123  IR-PCI-MSI 327680-edge      xhci_hcd\n"
        "NMI:          3          4   Non-maskable interrupts\n"
        "LOC:    1234567    2345678   Local timer interrupts\n"
        "SPU:          0          0   Spurious interrupts\n"
        "ERR:          0\n"
        "MIS:          0\n"
        " 35:          0          0   PCI-MSI 1048576-edge      nvme0q0\n";

static void test_x86(void) {
        IrqNames t = IRQ_NAMES_EMPTY;
        static const struct {
                unsigned irq;
                const char *name;
        } want[] = {
                { 0, "timer" },
                { 1, "i8042" },
                { 8, "rtc0" },
                { 9, "acpi" },
                { 18, "i8042, rtc0" },
                { 24, "ACPI:Ged" },
                { 35, "nvme0q0" },
                { 40, "xhci_hcd" },
                { 120, "aerdrv" },
                { 131, "eth0-TxRx-0" },
                { 132, "eth0-TxRx-1" },
                { 133, "eth0" },
        };
        bool ascending = true;

        CHECK(irq_names_parse(x86_two_cpus, &t) == 0, "x86 /proc/interrupts parses");
        CHECK(t.n == ELEMENTSOF(want), "one entry per numbered IRQ; NMI, LOC, SPU, ERR, MIS skipped");
        for (size_t i = 1; i < t.n; i++)
                ascending = ascending && t.irqs[i - 1] < t.irqs[i];
        CHECK(ascending, "entries sorted by IRQ number although the input is not");
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                char what[96];
                snprintf(what, sizeof(what), "IRQ %u is '%s'", want[i].irq, want[i].name);
                CHECK_STR(irq_names_lookup(&t, want[i].irq), want[i].name, what);
        }
        CHECK(!irq_names_lookup(&t, 2), "IRQ 2 is not listed");
        CHECK(!irq_names_lookup(&t, 134), "IRQ past the end is not listed");
        CHECK(!irq_names_lookup(&t, 10), "IRQ between entries is not listed");
        irq_names_done(&t);
        CHECK(t.n == 0 && !t.irqs && !t.names, "irq_names_done() empties the table");
        irq_names_done(&t);
}

static void test_four_cpus(void) {
        IrqNames t = IRQ_NAMES_EMPTY;
        const char *text =
                "            CPU0       CPU1       CPU2       CPU3       \n"
                "   1:          0          0          0       9213  IR-IO-APIC    1-edge      i8042\n"
                "  16:          0          0          0          0  IR-IO-APIC   16-fasteoi   i801_smbus\n"
                " 142:    1000000    2000000    3000000 4000000000  IR-PCI-MSI 524288-edge      eth1-rx-0\n"
                " NMI:          0          0          0          0   Non-maskable interrupts\n"
                " LOC:   11111111   22222222   33333333   44444444   Local timer interrupts\n";

        CHECK(irq_names_parse(text, &t) == 0, "four-CPU table parses");
        CHECK(t.n == 3, "three numbered IRQs");
        CHECK_STR(irq_names_lookup(&t, 1), "i8042", "IRQ 1 with the count in the fourth column");
        CHECK_STR(irq_names_lookup(&t, 16), "i801_smbus", "IRQ 16");
        CHECK_STR(irq_names_lookup(&t, 142), "eth1-rx-0", "IRQ 142 with ten-digit counts");
        irq_names_done(&t);
}

static void test_arm(void) {
        IrqNames t = IRQ_NAMES_EMPTY;
        /* CONFIG_GENERIC_IRQ_SHOW_LEVEL: " Level     " / " Edge      " before the name */
        const char *text = "           CPU0       CPU1       \n"
                           " 11:     123456     654321     GICv3  27 Level     arch_timer\n"
                           " 14:          0          0     GICv3  37 Level     ttyAMA0\n"
                           "IPI0:      100        200       Rescheduling interrupts\n";

        CHECK(irq_names_parse(text, &t) == 0, "arm64 table parses");
        CHECK(t.n == 2, "IPI lines skipped");
        CHECK_STR(irq_names_lookup(&t, 11), "arch_timer", "GIC level IRQ name");
        CHECK_STR(irq_names_lookup(&t, 14), "ttyAMA0", "second GIC IRQ name");
        irq_names_done(&t);
}

static void test_reparse_replaces(void) {
        IrqNames t = IRQ_NAMES_EMPTY;

        CHECK(irq_names_parse(x86_two_cpus, &t) == 0, "first parse");
        CHECK(irq_names_parse("           CPU0\n  5:   1  IO-APIC   5-edge      snd\n", &t) == 0, "second parse");
        CHECK(t.n == 1 && irq_names_lookup(&t, 5) && !irq_names_lookup(&t, 131),
              "a second parse replaces the table, it does not merge");
        irq_names_done(&t);
}

static void test_garbage(void) {
        static const char *const inputs[] = {
                "",
                "\n\n\n",
                "           CPU0       CPU1\n",
                "not /proc/interrupts at all\nhello\n",
                "\xff\xfe\x01garbage\n::::\n   :   \n-1: x  y\nNMI\n12345\n 7 :  1  a  b\n",
                "           CPU0\n 99999999999999999999:  1  IO-APIC  1-edge  big\n",
                "           CPU0\n 42:",
                "           CPU0\n 42:          ",
                "CPU0 CPU1 CPU2 CPU3 CPU4 CPU5 CPU6 CPU7 CPU8 CPU9\n 3:\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                IrqNames t = IRQ_NAMES_EMPTY;
                char what[64];
                int r = irq_names_parse(inputs[i], &t);

                snprintf(what, sizeof(what), "garbage input %zu parses without entries", i);
                CHECK(r == 0 && t.n == 0, what);
                snprintf(what, sizeof(what), "garbage input %zu: lookup finds nothing", i);
                CHECK(!irq_names_lookup(&t, 0) && !irq_names_lookup(&t, 42) && !irq_names_lookup(&t, 3), what);
                irq_names_done(&t);
        }
}

static void test_no_action(void) {
        IrqNames t = IRQ_NAMES_EMPTY;
        /* show_interrupts() prints an IRQ with counts but no action (its driver was unloaded):
         * the line ends after the trigger column, with no action name at all. */
        const char *text = "           CPU0       CPU1       \n"
                           " 25:          7          0   IO-APIC   6-edge    \n"
                           " 26:          0          1   IO-APIC   7-edge      parport0\n";

        CHECK(irq_names_parse(text, &t) == 0, "table with an action-less IRQ parses");
        CHECK_STR(irq_names_lookup(&t, 26), "parport0", "the IRQ after it is named");
        if (!CHECK(irq_names_lookup(&t, 25) == NULL, "an IRQ without an action has no name"))
                printf("#   got '%s'\n", irq_names_lookup(&t, 25));
        irq_names_done(&t);
}

/* host_read_file_max() at its bound (#24 item 4): a file of max bytes is read, one of
 * max + 1 is -EFBIG, and so is one the doubling buffer would have taken whole (it grew
 * past max: a sparse 264 MiB /proc/interrupts read in full at a max of 256 MiB). */
static void test_read_max(void) {
        char root[256];
        _cleanup_free_ char *path = NULL, *text = NULL;
        Host *h = NULL;
        size_t len = 0;

        faketree_mkdtemp(root, sizeof(root), "test-interrupts");
        faketree_write(root, "proc/interrupts", "");
        path = faketree_path(root, "proc/interrupts");
        if (!CHECK(host_open(root, &h) >= 0, "a host on the tree"))
                return;
        CHECK(truncate(path, 5000) == 0 && host_read_file_max(h, "proc/interrupts", 5000, &text, &len) == 0 &&
                      len == 5000,
              "a file of max bytes is read");
        text = mfree(text);
        CHECK(truncate(path, 5001) == 0 && host_read_file_max(h, "proc/interrupts", 5000, &text, &len) == -EFBIG,
              "one byte more is -EFBIG");
        CHECK(truncate(path, 9000) == 0 && host_read_file_max(h, "proc/interrupts", 5000, &text, &len) == -EFBIG,
              "and a file the grown buffer could hold whole (9000 bytes, max 5000) is -EFBIG too");
        host_free(h);
        faketree_remove(root);
}

int main(void) {
        test_read_max();
        test_x86();
        test_four_cpus();
        test_arm();
        test_reparse_replaces();
        test_garbage();
        test_no_action();
        return tap_finish();
}
