"""Entry point placeholder; replaced below."""


def main() -> None:
    pass
