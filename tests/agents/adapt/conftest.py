import pytest

from lorekit.envs.textcraft import TextCraftEnv


@pytest.fixture(scope="module")
def env() -> TextCraftEnv:
    return TextCraftEnv()
