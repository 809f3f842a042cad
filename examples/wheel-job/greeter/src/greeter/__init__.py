"""Greets whoever the job names: the entry point of the example's python_wheel_task."""

import argparse


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="lakehouse")
    args = parser.parse_args()
    print(f"hello, {args.name}")
