"""The kernels the tests write for new constructs, with their specs, converted into one folder
so that the GPU machine can check them (``migrate check --from OUT --device cuda``): what the
tests check on the CPU, checked against the CUDA the GPU runs.

    python bench/test_kernels.py [-o build/unitcheck] [--only NAME,...]

Each case is a (test module, source constant, spec constant); each is written as ``k.cu`` and
``k.toml`` (the tests' own layout, ``tests/analysis/support.py``) in a folder of its own under
``OUT_src``, and all are converted at once, unchecked (the GPU machine checks them).
"""
from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: name -> (test module, source constant, spec constant)
CASES = {
    "spelled_later": ("tests.analysis.lift.test_map", "SPELLED_LATER", "SPELLED_LATER_SPEC"),
    "digits": ("tests.analysis.lift.test_map", "DIGITS", "DIGITS_SPEC"),
    "cub_blocks": ("tests.analysis.prepare.test_cub_blocks", "KERNELS", "SPEC"),
    "records": ("tests.analysis.prepare.test_records", "KERNELS", "SPEC"),
    "continue": ("tests.emit.test_continue_in_strided_loops", "KERNEL", "SPEC"),
    "unsigned_wrap": ("tests.emit.test_unsigned_wrap_in_comparisons", "KERNEL", "SPEC"),
    "hidden_wrap": ("tests.emit.test_unsigned_wrap_in_comparisons", "HIDDEN_WRAP", "HIDDEN_WRAP_SPEC"),
    "exponent_bias": ("tests.emit.test_unsigned_constants", "EXPONENT_BIAS", "EXPONENT_BIAS_SPEC"),
    "negative_index": ("tests.runtime.test_negative_index", "KERNEL", "SPEC"),
    "unsigned_votes": ("tests.emit.test_warp_votes", "UNSIGNED_VOTES", "UNSIGNED_VOTES_SPEC"),
    "bit_copies": ("tests.analysis.prepare.test_bit_copies", "KERNELS", "SPEC"),
    "loop_step_values": ("tests.analysis.prepare.test_loop_step_values", "KERNELS", "SPEC"),
    "pointer_returns": ("tests.analysis.prepare.test_pointer_returns", "CELLS", "CELLS_SPEC"),
    "constant_struct": ("tests.analysis.prepare.test_vector_values", "CONSTANT_STRUCT", "CONSTANT_SPEC"),
    "half_template": ("tests.analysis.prepare.test_vector_values", "HALF_TEMPLATE", "HALF_SPEC"),
    "complex_lanes": ("tests.analysis.prepare.test_vector_values", "COMPLEX", "COMPLEX_SPEC"),
    "compound_literals": ("tests.parse.test_compound_literals", "KERNELS", "SPEC"),
    "legacy_warp_calls": ("tests.parse.test_legacy_warp_calls", "LEGACY", "SPEC"),
    "template_recursion": ("tests.parse.test_template_recursion", "KERNELS", "SPEC"),
    "sincos": ("tests.analysis.prepare.test_sincos", "KERNEL", "SPEC"),
    "complex_ops": ("tests.parse.test_lanewise", "COMPLEX", "COMPLEX_SPEC"),
    "struct_members": ("tests.analysis.prepare.test_records", "STRUCTS_WITH_MEMBERS", "MEMBERS_SPEC"),
    "pow_int": ("tests.emit.test_pow_integer_exponent", "KERNEL", "SPEC"),
    "template_literal": ("tests.emit.test_template_literal_arguments", "KERNEL", "SPEC"),
    "written_params": ("tests.analysis.prepare.test_written_params", "KERNEL", "SPEC"),
    "branched_strides": ("tests.analysis.lift.test_map", "BRANCHED", "BRANCHED_SPEC"),
    "race_free": ("tests.analysis.lift.test_map", "RACE_FREE", "RACE_FREE_SPEC"),
    "thread_lanes": ("tests.analysis.lift.test_map", "THREAD_LANES", "THREAD_LANES_SPEC"),
    "parameter_names": ("tests.emit.test_parameter_names", "KERNEL", "SPEC"),
    "records_across": ("tests.analysis.lift.test_map", "RECORDS_ACROSS", "RECORDS_ACROSS_SPEC"),
    "several_buffers": ("tests.analysis.prepare.test_moving_pointers", "SEVERAL", "SEVERAL_SPEC"),
    "struct_methods": ("tests.parse.test_struct_methods", "CLASSES", "SPEC"),
    "template_call_types": ("tests.parse.test_template_auto", "QUANT", "QUANT_SPEC"),
    "template_shuffles": ("tests.parse.test_template_auto", "WARP_SUM", "WARP_SUM_SPEC"),
    "template_casts": ("tests.parse.test_template_auto", "CASTS", "CASTS_SPEC"),
    "switch_cases": ("tests.emit.test_switch_cases", "KERNELS", "SPEC"),
    "template_extents": ("tests.emit.test_template_extents", "KERNEL", "SPEC"),
    "statement_expressions": ("tests.parse.test_statement_expressions", "KERNEL", "SPEC"),
    "local_array_views": ("tests.analysis.prepare.test_local_array_views", "KERNEL", "SPEC"),
    "array_params": ("tests.analysis.prepare.test_local_array_views", "ARRAY_PARAMS", "ARRAY_PARAMS_SPEC"),
    "element_routines": ("tests.analysis.prepare.test_local_array_views", "ELEMENT_ROUTINES",
                         "ELEMENT_ROUTINES_SPEC"),
    "forwarded_values": ("tests.analysis.prepare.test_instances", "FORWARDED", "FORWARDED_SPEC"),
    "loop_header_calls": ("tests.analysis.prepare.test_inline", "ITERATOR", "ITERATOR_SPEC"),
    "typed_views": ("tests.analysis.prepare.test_typed_views", "BEST", "BEST_SPEC"),
    "typed_views_bytes": ("tests.analysis.prepare.test_typed_views", "HIST", "HIST_SPEC"),
    "typed_views_dynamic": ("tests.analysis.prepare.test_typed_views", "CARVE", "CARVE_SPEC"),
    "atomic_helpers": ("tests.emit.test_atomic_helpers", "KERNEL", "SPEC"),
    "atomic_helpers_portable": ("tests.emit.test_atomic_helpers", "COVER", "COVER_SPEC"),
    "sign_test": ("tests.emit.test_unsigned_wrap_in_comparisons", "SIGN_TEST", "SIGN_SPEC"),
    "long_switch": ("tests.emit.test_switch_cases", "LONG_TAIL", "LONG_TAIL_SPEC"),
    "template_addresses": ("tests.parse.test_template_auto", "ADDRESSES", "ADDRESSES_SPEC"),
    "reread_branches": ("tests.analysis.facts.test_reread_branches", "BEST_OF_TWO", "SPEC"),
    "lane_offset": ("tests.emit.test_unsigned_wrap_in_comparisons", "LANE_OFFSET", "LANE_OFFSET_SPEC"),
    "cas_loops": ("tests.analysis.prepare.test_cas_loops", "LOOPS", "SPEC"),
    "effect_conditions": ("tests.analysis.prepare.test_effect_conditions", "WALKS", "SPEC"),
    "value_specialisations": ("tests.parse.test_value_specialisations", "POLYNOMIALS", "POLYNOMIALS_SPEC"),
    "value_specialisations_template": ("tests.parse.test_value_specialisations", "OPERATIONS", "OPERATIONS_SPEC"),
    "lockstep_tail": ("tests.analysis.prepare.test_lockstep_steps", "TAIL", "TAIL_SPEC"),
    "lockstep_scan": ("tests.analysis.prepare.test_lockstep_steps", "SCAN", "SCAN_SPEC"),
    "lockstep_transpose": ("tests.analysis.prepare.test_lockstep_steps", "TRANSPOSE", "TRANSPOSE_SPEC"),
    "warp_votes": ("tests.emit.test_warp_votes", "VOTES", "VOTES_SPEC"),
    "thread_rows": ("tests.emit.test_thread_array_arguments", "NEIGHBOURS", "SPEC"),
    "guarded_index": ("tests.emit.test_unsigned_guarded_index", "COLUMN_MINIMA", "SPEC"),
    "volatile_globals": ("tests.emit.test_volatile_globals", "TALLY", "TALLY_SPEC"),
    "unsigned_constants": ("tests.emit.test_unsigned_constants", "KERNEL", "SPEC"),
    "capital_names": ("tests.emit.test_capital_kernel_names", "KERNEL", "SPEC"),
    "flat_array_args": ("tests.emit.test_flat_array_arguments", "KERNEL", "SPEC"),
    "template_value_names": ("tests.emit.test_template_value_names", "KERNEL", "SPEC"),
    "default_arguments": ("tests.parse.test_default_arguments", "KERNELS", "SPEC"),
    "dependent_values": ("tests.emit.test_dependent_values", "KERNEL", "SPEC"),
    "literal_trees": ("tests.analysis.lift.test_reduce", "LITERAL_TREES", "LITERAL_TREES_SPEC"),
    "pointer_sums": ("tests.analysis.prepare.test_instances", "POINTER_SUMS", "POINTER_SUMS_SPEC"),
    "local_fields": ("tests.analysis.prepare.test_records", "LOCAL_FIELDS", "LOCAL_FIELDS_SPEC"),
    "sizeof_template": ("tests.emit.test_dependent_values", "SIZEOF", "SIZEOF_SPEC"),
    "row_vectors": ("tests.analysis.prepare.test_vectors", "ROW_VECTORS", "ROW_VECTORS_SPEC"),
    "constructors": ("tests.analysis.prepare.test_records", "CONSTRUCTORS", "CONSTRUCTORS_SPEC"),
    "struct_pointer_calls": ("tests.analysis.prepare.test_records", "STRUCT_POINTER_CALLS",
                             "STRUCT_POINTER_CALLS_SPEC"),
    "struct_field_index": ("tests.analysis.prepare.test_vectors", "STRUCT_FIELD_INDEX", "STRUCT_FIELD_INDEX_SPEC"),
    "addressed_params": ("tests.analysis.prepare.test_written_params", "ADDRESSED", "ADDRESSED_SPEC"),
    "element_references": ("tests.analysis.prepare.test_vectors", "ELEMENT_REFERENCES", "ELEMENT_REFERENCES_SPEC"),
    "double_limits": ("tests.emit.test_dependent_values", "DOUBLE_LIMITS", "DOUBLE_LIMITS_SPEC"),
    "unsigned_rows": ("tests.emit.test_unsigned_rows", "KERNEL", "SPEC"),
    "do_while_steps": ("tests.analysis.prepare.test_effect_conditions", "DO_WHILE", "DO_SPEC"),
    "conversion_operators": ("tests.parse.test_conversion_operators", "DEQUANT", "SPEC"),
    "address_steps": ("tests.analysis.prepare.test_pointer_views", "PITCHED", "PITCHED_SPEC"),
    "matrices": ("tests.analysis.prepare.test_records", "MATRICES", "MATRICES_SPEC"),
    "memory_copies": ("tests.analysis.prepare.test_memory_copies", "STEPS", "SPEC"),
    "template_asserts": ("tests.parse.test_template_asserts", "GATHER", "SPEC"),
    "loop_conditions": ("tests.analysis.prepare.test_inline", "LOOP_CONDITIONS", "LOOP_CONDITIONS_SPEC"),
    "lcg_uint64": ("tests.emit.test_lcg_uint64", "KERNEL", "SPEC"),
    "stepped_views": ("tests.analysis.prepare.test_stepped_views", "KERNELS", "SPEC"),
    "append_through_pointer": ("tests.analysis.prepare.test_value_steps", "APPEND", "APPEND_SPEC"),
    "switch_returns": ("tests.analysis.prepare.test_returns", "SWITCH_RETURNS", "SWITCH_RETURNS_SPEC"),
    "host_constant_templates": ("tests.analysis.prepare.test_instances", "STACKS", "STACKS_SPEC"),
    "maybe_null_views": ("tests.analysis.prepare.test_pointer_views", "MAYBE_NULL", "MAYBE_NULL_SPEC"),
    "packed_views": ("tests.analysis.prepare.test_pointer_views", "PACKED", "PACKED_SPEC"),
    "template_shared_views": ("tests.analysis.prepare.test_typed_views", "SECTIONS", "SECTIONS_SPEC"),
    "skipped_columns": ("tests.analysis.lift.test_map", "SKIPS", "SKIPS_SPEC"),
    "moving_atomic_views": ("tests.analysis.prepare.test_moving_pointers", "CHANNELS", "CHANNELS_SPEC"),
    "straight_line_helpers": ("tests.emit.test_device", "TIES", "TIES_SPEC"),
    "array_parameters": ("tests.parse.test_frontend", "ARRAY_PARAMS", "ARRAY_PARAMS_SPEC"),
    "narrow_scalars": ("tests.emit.test_narrow_scalar_parameters", "KERNEL", "SPEC"),
    "do_while_continue": ("tests.emit.test_continue_in_strided_loops", "DO_WHILE", "DO_WHILE_SPEC"),
    # the eleventh session's (2026-12-06)
    "lockstep_regions": ("tests.analysis.facts.test_lockstep_regions", "KERNEL", "SPEC"),
    "butterfly": ("tests.analysis.lift.test_butterfly", "BUTTERFLY", "SPEC"),
    "forward_cell": ("tests.analysis.lift.test_forward_cells", "CELL", "CELL_SPEC"),
    "forward_cell_guarded": ("tests.analysis.lift.test_forward_cells", "CELL_GUARDED", "CELL_GUARDED_SPEC"),
    "forward_flat": ("tests.analysis.lift.test_forward_cells", "FLAT", "FLAT_SPEC"),
    "forward_counted": ("tests.analysis.lift.test_forward_cells", "COUNTED", "COUNTED_SPEC"),
    "reduce_row_sums": ("tests.analysis.lift.test_reduce_loops", "ROW_SUMS", "ROW_SUMS_SPEC"),
    "reduce_tiles": ("tests.analysis.lift.test_reduce_loops", "TILES", "TILES_SPEC"),
    "reduce_vote": ("tests.analysis.lift.test_reduce_loops", "VOTE", "VOTE_SPEC"),
    "chained_places": ("tests.analysis.prepare.test_chained_places", "KERNEL", "SPEC"),
    "half_bit_copies": ("tests.analysis.prepare.test_half_bit_copies", "KERNEL", "SPEC"),
    "macro_template_args": ("tests.analysis.prepare.test_macro_template_args", "SOURCE", "SPEC"),
    "pointer_copies": ("tests.analysis.prepare.test_pointer_copies", "SWAP", "SPEC"),
    "shared_pointers": ("tests.analysis.prepare.test_shared_pointers", "KERNEL", "SPEC"),
    "struct_bit_containers": ("tests.analysis.prepare.test_struct_bit_containers", "KERNEL", "SPEC"),
    "vector_word_bits": ("tests.analysis.prepare.test_vector_word_bits", "KERNEL", "SPEC"),
    "vector_words": ("tests.analysis.prepare.test_vector_word_bits", "WORDS", "WORDS_SPEC"),
    "template_atomic_sub": ("tests.emit.test_template_atomic_sub", "SOURCE", "SPEC"),
    "unsigned_switch": ("tests.emit.test_unsigned_switch", "KERNEL", "SPEC"),
    "scalar_store_casts": ("tests.runtime.test_scalar_store_casts", "SOURCE", "SPEC"),
    "unsigned_selects": ("tests.runtime.test_unsigned_selects", "SOURCE", "SPEC"),
    "private_hist": ("tests.analysis.lift.test_private_shared", "HIST", "HIST_SPEC"),
    "private_rows": ("tests.analysis.lift.test_private_shared", "ROWS", "ROWS_SPEC"),
    "private_template": ("tests.analysis.lift.test_private_shared", "TEMPLATE", "TEMPLATE_SPEC"),
    "private_own_atomic": ("tests.analysis.lift.test_private_shared", "OWN_ATOMIC", "OWN_ATOMIC_SPEC"),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", type=Path, default=REPO / "build" / "unitcheck")
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    only = {x for x in args.only.split(",") if x}
    src = args.out.parent / (args.out.name + "_src")
    for name, (module, source, spec) in CASES.items():
        if only and name not in only:
            continue
        mod = importlib.import_module(module)
        folder = src / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "k.cu").write_text(getattr(mod, source))
        (folder / "k.toml").write_text(getattr(mod, spec))
    cmd = [sys.executable, "-m", "migrate", "convert", str(src), "-o", str(args.out), "-q", "--force"]
    return subprocess.run(cmd, cwd=REPO).returncode


if __name__ == "__main__":
    sys.exit(main())
