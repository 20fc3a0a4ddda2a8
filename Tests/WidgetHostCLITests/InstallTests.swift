import Foundation
import Testing

/// `make install` into a temporary prefix, from this test run's own build
/// (`BIN=`; the release build with the static Swift runtime and `make deb`
/// are checked by scripts/install-check, which takes minutes).
@Suite("make install")
struct InstallTests {
    @Test func makefileHasThePackagersTargets() {
        for target in ["all", "build", "install", "uninstall", "deb", "clean"] {
            let result = CLI.shell(
                "make -n -C '\(CLI.repositoryRoot)' \(target) PREFIX=/nowhere BIN=/nowhere >/dev/null")
            #expect(result.status == 0, "make -n \(target): \(result.output)")
        }
    }

    @Test func installsTheLayoutAndTheInstalledProgramWorks() throws {
        let prefix = CLI.temporaryDirectory("prefix")
        let start = Date()
        let install = CLI.shell(
            "make -s -C '\(CLI.repositoryRoot)' install PREFIX='\(prefix)' BIN='\(CLI.buildDirectory)' 2>&1")
        print("make install BIN=(the test build): \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
        #expect(install.status == 0, "\(install.output)")
        let files = [
            "bin/widgethost", "libexec/widgethost/widgethost-runner",
            "lib/widgethost/plugins/libCharacterPlugin.so", "lib/widgethost/plugins/libCountdownPlugin.so",
            "lib/widgethost/plugins/libMarketHoursPlugin.so", "include/widgethost/provider.h",
            "include/widgethost/center.h", "lib/pkgconfig/widgethost-provider.pc",
            "lib/pkgconfig/widgethost-center.pc", "lib/libwidgethost-center.so",
            "lib/systemd/user/widgethost.service", "share/man/man1/widgethost.1",
            "share/man/man1/widgethost-load.1", "share/man/man1/widgethost-new.1",
            "share/bash-completion/completions/widgethost", "share/zsh/site-functions/_widgethost",
            "share/fish/vendor_completions.d/widgethost.fish", "share/widgethost/rust/Cargo.toml",
            "share/widgethost/WidgetHostKit/Package.swift",
            "share/widgethost/WidgetHostKit/Sources/WidgetHostABI/include/widgethost/provider.h",
            "share/widgethost/WidgetHostKit/Sources/WidgetHostJSON/JSONTextEncoder.swift",
        ]
        for file in files {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file) not installed")
        }
        // The runner is found in libexec, not next to the binary.
        #expect(!FileManager.default.fileExists(atPath: prefix + "/bin/widgethost-runner"))
        let load = CLI.shell(
            "cd / && env -u WIDGETHOST_RUNNER '\(prefix)/bin/widgethost' load '\(prefix)/lib/widgethost/plugins/libCountdownPlugin.so' --data-dir '\(CLI.temporaryDirectory("prefix-data"))' 2>&1"
        )
        #expect(load.status == 0 && load.output.contains("All calls succeeded."), "\(load.output)")
        let version = CLI.shell("'\(prefix)/bin/widgethost' --version")
        #expect(version.status == 0 && !version.output.isEmpty)

        // pkg-config files point into the prefix.
        let cflags = CLI.shell(
            "PKG_CONFIG_PATH='\(prefix)/lib/pkgconfig' pkg-config --cflags widgethost-provider widgethost-center")
        #expect(cflags.output.contains("-I\(prefix)/include"), "\(cflags.output)")
        // The unit starts the installed program.
        let unit = try String(contentsOfFile: prefix + "/lib/systemd/user/widgethost.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\(prefix)/bin/widgethost run\n"), "\(unit)")
        // Man pages from the argument parser: every option of load is there.
        let manual = try String(contentsOfFile: prefix + "/share/man/man1/widgethost-load.1", encoding: .utf8)
        for option in ["kind", "family", "json", "data\\-dir", "isolation"] {
            #expect(manual.contains("\\fB\\-\\-\(option)\\fR"), "--\(option) missing from widgethost-load.1")
        }
        let bash = try String(contentsOfFile: prefix + "/share/bash-completion/completions/widgethost", encoding: .utf8)
        #expect(bash.contains("load") && bash.contains("--family"))

        // An installed widgethost writes projects against the installed SDK.
        let projects = CLI.temporaryDirectory("prefix-new")
        let new = CLI.shell(
            "cd '\(projects)' && rm -rf fromprefix && '\(prefix)/bin/widgethost' new --c fromprefix && make -s -C fromprefix && '\(prefix)/bin/widgethost' load fromprefix/fromprefix.so --data-dir '\(projects)/data' 2>&1"
        )
        #expect(new.status == 0, "\(new.output)")
        let makefile = try String(contentsOfFile: projects + "/fromprefix/Makefile", encoding: .utf8)
        #expect(makefile.contains("-I\(prefix)/include"))

        let uninstall = CLI.shell("make -s -C '\(CLI.repositoryRoot)' uninstall PREFIX='\(prefix)' 2>&1")
        #expect(uninstall.status == 0, "\(uninstall.output)")
        #expect(!FileManager.default.fileExists(atPath: prefix + "/bin/widgethost"))
        #expect(!FileManager.default.fileExists(atPath: prefix + "/libexec/widgethost"))
    }
}
