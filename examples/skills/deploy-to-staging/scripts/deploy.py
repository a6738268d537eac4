"""Print the commands that deploy the current branch to staging (it runs nothing)."""

COMMANDS = (
    "git push origin HEAD",
    "ci run --environment staging",
    "curl --fail https://staging.example.invalid/health",
)

if __name__ == "__main__":
    print("\n".join(COMMANDS))
