"""registry.yaml parsing and validation: every error names file, line and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from triton_ext._errors import ManifestError, UnknownPassError
from triton_ext._manifest import Manifest, load_manifest, merge, parse_registry

VALID = textwrap.dedent(
    """\
    schema: 1
    extensions:
      loop_split:
        kind: pass
        directory: passes/LoopSplit
        library: TritonExtLoopSplit
        status: experimental
        summary: Split loops where an induction-variable condition flips.
        owners: [triton-ext maintainers]
        targets:
          cuda: {min_arch: 80}
          hip: {}
        passes:
          loop_split:
            stage: ttir
            after: loop_unroll
            then: [canonicalize, cse]
            enabled_by_default: false
            options:
              max-splits: {default: 3, type: int, help: "Most loops split per function."}
    """
)


def parse(text: str) -> Manifest:
    return parse_registry(text, "registry.yaml")


def errors_of(text: str) -> tuple[str, ...]:
    with pytest.raises(ManifestError) as info:
        parse(text)
    return info.value.errors


def test_valid_registry_parses_into_frozen_dataclasses() -> None:
    manifest = parse(VALID)
    ext = manifest.extension("loop_split")
    spec = manifest.find_pass("loop_split")
    assert ext.library_file == "libTritonExtLoopSplit.so"
    assert spec.stage == "ttir" and spec.after == "loop_unroll" and spec.occurrence == "first"
    assert spec.then == ("canonicalize", "cse")
    assert spec.options[0].name == "max-splits" and spec.options[0].default == 3
    assert ext.applies_to("cuda", 90) and not ext.applies_to("cuda", 75) and ext.applies_to("hip", "gfx942")
    assert spec.option("max-splits").render(2) == "max-splits=2"
    with pytest.raises(Exception):
        spec.stage = "ttgir"  # type: ignore[misc]


@pytest.mark.parametrize(
    "old, new, line, field, message",
    [
        ("stage: ttir", "stage: ttri", 15, "extensions.loop_split.passes.loop_split.stage",
         "expected one of ttir, ttgir, llir, found 'ttri'"),
        ("kind: pass", "kind: pas", 4, "extensions.loop_split.kind", "expected one of pass, dialect, backend, language, pipeline, found 'pas'"),
        ("status: experimental", "status: beta", 7, "extensions.loop_split.status", "found 'beta'"),
        ("    passes:\n", "    pases:\n", 13, "extensions.loop_split.pases", "did you mean 'passes'?"),
        ("schema: 1", "schema: 2", 1, "schema", "expected 1, found 2"),
        ("schema: 1", "schema: one", 1, "schema", "expected 1, found 'one'"),
        ("enabled_by_default: false", "enabled_by_default: maybe", 18, "enabled_by_default", "expected true or false, found 'maybe'"),
        ("enabled_by_default: false", "enabled_by_default: false\n        auto: sometimes", 19, "passes.loop_split.auto",
         "expected true or false, found 'sometimes'"),
        ("{default: 3, type: int,", "{default: three, type: int,", 20, "options.max-splits.default", "expected a value of type int, found 'three'"),
        ("type: int,", "type: integer,", 20, "options.max-splits.type", "expected one of int, float, bool, str"),
        ("max-splits:", "max_splits:", 20, "options.max_splits", "kebab-case"),
        ("  loop_split:\n    kind", "  LoopSplit:\n    kind", 3, "extensions.LoopSplit", "snake_case"),
        ("cuda: {min_arch: 80}", "cuda: {min_arch: eighty}", 11, "targets.cuda.min_arch", "expected an integer like 80, found 'eighty'"),
        ("cuda: {min_arch: 80}", "cuda: {min_arch: 80}\n      xpu: {}", 12, "targets.xpu", "unknown field; expected one of cuda, hip"),
        ("then: [canonicalize, cse]", "then: canonicalize", 17, "then", "expected a list of strings, found 'canonicalize'"),
        ("after: loop_unroll", "after: loop_unroll\n        before: cse", 17, "before", "expected either after or before, found both"),
        ("    library: TritonExtLoopSplit\n", "", 3, "extensions.loop_split.library", "required field is missing"),
        ("        stage: ttir\n", "", 14, "passes.loop_split.stage", "required field is missing"),
        ("owners: [triton-ext maintainers]", "owners: triton-ext maintainers", 9, "owners", "expected a list of strings"),
        ("after: loop_unroll", "occurrence: last", 16, "occurrence", "expected only with after, before or replaces"),
        ("after: loop_unroll", "after: loop_unroll\n        on_failure: abort", 17, "on_failure",
         "expected one of skip, error"),
        ("after: loop_unroll", "after: loop_unroll\n        target_options: {xpu: {max-splits: 2}}", 17,
         "target_options.xpu", "unknown field; expected one of cuda, hip"),
        ("after: loop_unroll", "after: loop_unroll\n        target_options: {cuda: {max-splits: [2]}}", 17,
         "target_options.cuda.max-splits", "expected a string, integer or boolean"),
        ("after: loop_unroll", "after: loop_unroll\n        with: [loop_fuse]", 17, "passes.loop_split.with",
         "expected other passes of extension loop_split (none), found 'loop_fuse'"),
        ("after: loop_unroll", "after: loop_unroll\n        with: [loop_split]", 17, "passes.loop_split.with",
         "found 'loop_split'"),
        ("after: loop_unroll", "after: loop_unroll\n        with: LoopFuse", 17, "passes.loop_split.with",
         "expected a list of strings"),
        ("after: loop_unroll", "after: loop_unroll\n        compile_options: {max-splits: num_stagez}", 17,
         "compile_options.max-splits", "expected one of num_warps, num_stages, num_ctas, found 'num_stagez'"),
        ("after: loop_unroll", "after: loop_unroll\n        compile_options: {max_splits: num_stages}", 17,
         "compile_options.max_splits", "expected a kebab-case option flag"),
        ("after: loop_unroll", "after: loop_unroll\n        compile_options: {max-parts: num_stages}", 17,
         "compile_options.max-parts", "expected an option of pass loop_split (max-splits), found 'max-parts'"),
        ("after: loop_unroll", "after: loop_unroll\n        launch_requests: [launch_pdll]", 17,
         "passes.loop_split.launch_requests", "expected launch fields among launch_pdl, launch_cooperative_grid, "
         "found 'launch_pdll'"),
        ("after: loop_unroll", "after: loop_unroll\n        launch_requests: launch_pdl", 17,
         "passes.loop_split.launch_requests", "expected a list of strings"),
    ],
)
def test_malformed_field_names_file_line_field(old: str, new: str, line: int, field: str, message: str) -> None:
    assert old in VALID
    errors = errors_of(VALID.replace(old, new, 1))
    hits = [e for e in errors if field in e and message in e]
    assert hits, errors
    assert hits[0].startswith(f"registry.yaml:{line}: "), hits


def test_with_names_companions_of_the_same_extension() -> None:
    text = VALID.replace("    passes:\n", "    passes:\n      loop_fuse_helper:\n        stage: llir\n", 1)
    text = text.replace("after: loop_unroll", "after: loop_unroll\n        with: [loop_fuse_helper]", 1)
    manifest = parse(text)
    assert manifest.find_pass("loop_split").companions == ("loop_fuse_helper",)
    assert manifest.find_pass("loop_fuse_helper").companions == ()


def test_duplicate_key_names_both_lines() -> None:
    text = VALID.replace("    kind: pass\n", "    kind: pass\n    kind: dialect\n", 1)
    (error,) = errors_of(text)
    assert error == "registry.yaml:5: extensions.loop_split.kind: duplicate key (first defined on line 4)"


def test_all_problems_are_reported_together() -> None:
    text = VALID.replace("stage: ttir", "stage: ttri").replace("status: experimental", "status: beta")
    with pytest.raises(ManifestError) as info:
        parse(text)
    assert len(info.value.errors) == 2
    assert "2 problems in registry.yaml" in str(info.value)


def test_duplicate_pass_names_across_extensions() -> None:
    second = VALID.split("extensions:\n", 1)[1].replace("  loop_split:\n    kind", "  loop_split_copy:\n    kind", 1)
    (error,) = errors_of(VALID + second)
    assert "extensions.loop_split_copy.passes.loop_split" in error
    assert "unique across extensions" in error and "(registry.yaml:14)" in error


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "registry.yaml:1: expected a mapping with 'schema' and 'extensions', found an empty file"),
        ("schema: 1\nextensions: [a, b]\n", "registry.yaml:2: extensions: expected a mapping, found a list"),
        ("schema: 1\nextensions:\n  a: [\n", "registry.yaml:4: not valid YAML"),
        ("extensions: {}\n", "registry.yaml:1: schema: required field is missing"),
    ],
)
def test_malformed_documents(text: str, expected: str) -> None:
    with pytest.raises(ManifestError) as info:
        parse(text)
    assert str(info.value).startswith(expected)


def test_fragments_merge_and_conflicts_name_both_files(tmp_path: Path) -> None:
    a = parse_registry(VALID, tmp_path / "a.yaml")
    b = parse_registry(VALID, tmp_path / "b.yaml", library_dir=tmp_path)
    with pytest.raises(ManifestError) as info:
        merge([a, b])
    assert f"{tmp_path / 'b.yaml'}:3" in str(info.value) and f"{tmp_path / 'a.yaml'}:3" in str(info.value)
    renamed = parse_registry(VALID.replace("  loop_split:\n    kind", "  other:\n    kind"), tmp_path / "c.yaml")
    with pytest.raises(ManifestError, match="unique across extensions"):
        merge([a, renamed])
    other = parse_registry(
        VALID.replace("loop_split", "other").replace("TritonExtLoopSplit", "TritonExtOther"), tmp_path / "d.yaml", tmp_path
    )
    merged = merge([a, other])
    assert [e.name for e in merged.extensions] == ["loop_split", "other"]
    assert merged.extension("other").library_path() == tmp_path / "libTritonExtOther.so"


def test_unknown_pass_lists_known_and_suggests() -> None:
    manifest = parse(VALID)
    with pytest.raises(UnknownPassError) as info:
        manifest.find_pass("loop_splt")
    assert "known passes: loop_split" in str(info.value) and "did you mean 'loop_split'?" in str(info.value)


def test_load_manifest_reads_env_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text(VALID)
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(path))
    assert load_manifest().extension("loop_split").source == path
    path.write_text(VALID.replace("stage: ttir", "stage: nope"))
    with pytest.raises(ManifestError, match=rf"{path}:15: .*stage"):
        load_manifest()


def test_launch_requests_are_read_into_the_pass_spec() -> None:
    text = VALID.replace("after: loop_unroll", "after: loop_unroll\n        launch_requests: [launch_pdl]")
    assert parse(text).find_pass("loop_split").launch_requests == ("launch_pdl",)
    assert parse(VALID).find_pass("loop_split").launch_requests == ()


def test_joins_names_launch_options_the_mode_varies() -> None:
    text = VALID.replace("after: loop_unroll", "after: loop_unroll\n        joins: [num_warps]")
    assert parse(text).find_pass("loop_split").joins == ("num_warps",)
    assert parse(VALID).find_pass("loop_split").joins == ()
    (error,) = errors_of(VALID.replace("after: loop_unroll", "after: loop_unroll\n        joins: [num_threads]"))
    assert error == ("registry.yaml:17: extensions.loop_split.passes.loop_split.joins: expected launch options the "
                     "transparent mode varies, among num_warps, num_stages, found 'num_threads'"), error


def test_compile_options_name_an_int_option() -> None:
    text = VALID.replace("{default: 3, type: int,", '{default: "3", type: str,').replace(
        "after: loop_unroll", "after: loop_unroll\n        compile_options: {max-splits: num_stages}")
    (error,) = errors_of(text)
    assert error.startswith("registry.yaml:17: extensions.loop_split.passes.loop_split.compile_options.max-splits: "
                            "expected an int option (compile options are ints)"), error


def test_compile_options_take_the_kernels_value_unless_the_user_sets_it() -> None:
    from types import SimpleNamespace

    from triton_ext._selection import Enabled

    text = VALID.replace("after: loop_unroll", "after: loop_unroll\n        compile_options: {max-splits: num_stages}")
    ext = parse(text).extension("loop_split")
    spec = ext.passes[0]
    assert spec.compile_options == (("max-splits", "num_stages"),)
    plain = Enabled(spec, ext, (), "sha")
    assert plain.for_compile(SimpleNamespace(num_stages=1)).args == ("max-splits=1",)
    assert plain.for_compile(SimpleNamespace(num_warps=4)).args == ("max-splits=3",)  # no such field: as is
    assert Enabled(spec, ext, (("max-splits", 5),), "sha").for_compile(SimpleNamespace(num_stages=1)).args == (
        "max-splits=5",)
    assert plain.describe()["compile_options"] == [["max-splits", "num_stages"]]


def test_target_options_apply_on_their_backend_under_the_users_options() -> None:
    from triton_ext._selection import Enabled

    text = VALID.replace("after: loop_unroll", "after: loop_unroll\n        target_options: {cuda: {max-splits: 2}}")
    ext = parse(text).extension("loop_split")
    spec = ext.passes[0]
    assert spec.options_for("cuda") == {"max-splits": 2} and spec.options_for("hip") == {}
    plain = Enabled(spec, ext, (), "sha")
    assert plain.for_target("hip").args == ("max-splits=3",)
    assert plain.for_target("cuda").args == ("max-splits=2",)
    assert Enabled(spec, ext, (("max-splits", 1),), "sha").for_target("cuda").args == ("max-splits=1",)
    # The registry's values are part of what the compile-cache key describes.
    assert plain.describe()["target_options"] == [["cuda", [["max-splits", 2]]]]


def test_a_registry_that_is_missing_or_unreadable_names_its_path(tmp_path: Path) -> None:
    # Guards: load_manifest with an explicit path that does not exist, and a registry that cannot
    # be read or decoded: each error names the file and what to do, never a bare OSError.
    with pytest.raises(ManifestError, match=r"nowhere\.yaml: registry not found; expected a registry\.yaml \(set TRITON_EXT_REGISTRY\)"):
        load_manifest(tmp_path / "nowhere.yaml", entry_points=False)
    folder = tmp_path / "a-folder.yaml"
    folder.mkdir()  # reading a folder fails with an OSError for root too (file modes would not)
    with pytest.raises(ManifestError, match=r"a-folder\.yaml: cannot read registry: Is a directory"):
        load_manifest(folder, entry_points=False)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"schema: 1\n# caf\xe9\nextensions: {}\n")
    with pytest.raises(ManifestError, match=r"latin\.yaml:2: not UTF-8 text \(byte 0xe9 at offset 15\); save the registry as UTF-8"):
        load_manifest(latin, entry_points=False)
