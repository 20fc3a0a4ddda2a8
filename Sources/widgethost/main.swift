import WidgetHostCLI

WidgetHostCommand.runFromCommandLine()
