

def test_the_forgets_cursor_costs_no_commit_per_write_and_survives_a_restart(
    tmp_path: Path,
) -> None:
    m = open_mem(tmp_path / "a", extractor=None)
    bead = m.append_bead("I live in Lisbon.", ts=1000)
    learned(m)
    commits = m.store.commits
    m.add_node("ada", "person", name="Ada")
    learned(m)
    assert m.store.commits == commits + 1  # the write alone: no cursor commit after it
    m.close()
    m = open_mem(tmp_path / "a")  # now with the rules: the bead is extracted after a restart
    try:
        learned(m)
        assert "lisbon" in node_ids(m)
        m.forget(bead.id)
        learned(m)
        assert "lisbon" not in node_ids(m)
        assert m.reader.get_meta("knowledge:forgets") == m.version_vector()
    finally:
        m.close()
