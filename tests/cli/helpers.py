"""Helpers shared by the command-line tests."""


def _err(capsys):
    """What the command wrote to stderr, which holds no traceback."""
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err
