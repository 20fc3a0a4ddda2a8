# widgethost: build, install and package (the targets packagers expect).
#
#   make                          release build, Swift runtime linked statically (.build-install/)
#   make install PREFIX=DIR       install into DIR (default /usr/local); DESTDIR=... for staging
#   make deb                      a .deb (dpkg-deb) in dist/, PREFIX=/usr
#   make uninstall PREFIX=DIR
#
# Layout under PREFIX:
#   bin/widgethost                              the CLI and daemon
#   libexec/widgethost/widgethost-runner        the sandboxed child (found there by widgethost)
#   lib/widgethost/plugins/lib*Plugin.so        first-party plugins
#   include/widgethost/{provider,center}.h      the SDK headers
#   include/widgethost/ext/templates.h          the templates extension
#   lib/pkgconfig/widgethost-{provider,center}.pc, lib/libwidgethost-center.{a,so}
#   lib/systemd/user/widgethost.service         the daemon as a systemd user unit
#   share/man/man1/widgethost*.1                man pages, generated from the argument parser
#   share/{bash-completion,zsh,fish}/...        shell completions
#   share/widgethost/{rust,WidgetHostKit}       the Rust crate and the Swift SDK package (widgethost new)
#
# BIN=DIR installs the programs of an existing build (e.g. BIN=.build/debug)
# instead of making the release build; the test suite does that.

PREFIX ?= /usr/local
DESTDIR ?=
SCRATCH ?= .build-install
BUILD_FLAGS := -c release --scratch-path $(SCRATCH) --static-swift-stdlib -Xswiftc -static-stdlib
BIN ?=
ifeq ($(strip $(BIN)),)
BINDIR_BUILT := $(SCRATCH)/release
BUILD_STEP := build
else
BINDIR_BUILT := $(BIN)
BUILD_STEP :=
endif

PLUGINS := CharacterPlugin CountdownPlugin MarketHoursPlugin
ROOT := $(DESTDIR)$(PREFIX)
INSTALL := install

all: build

build:
	swift build $(BUILD_FLAGS)

version = $$($(BINDIR_BUILT)/widgethost --version)

install: $(BUILD_STEP)
	$(MAKE) -C SDK/client
	$(INSTALL) -d $(ROOT)/bin $(ROOT)/libexec/widgethost $(ROOT)/lib/widgethost/plugins \
	    $(ROOT)/include/widgethost $(ROOT)/lib/pkgconfig $(ROOT)/lib/systemd/user $(ROOT)/share/man/man1 \
	    $(ROOT)/share/bash-completion/completions $(ROOT)/share/zsh/site-functions \
	    $(ROOT)/share/fish/vendor_completions.d $(ROOT)/share/widgethost $(ROOT)/share/doc/widgethost
	$(INSTALL) -m 755 $(BINDIR_BUILT)/widgethost $(ROOT)/bin/widgethost
	$(INSTALL) -m 755 $(BINDIR_BUILT)/widgethost-runner $(ROOT)/libexec/widgethost/widgethost-runner
	for plugin in $(PLUGINS); do \
	    $(INSTALL) -m 755 $(BINDIR_BUILT)/lib$$plugin.so $(ROOT)/lib/widgethost/plugins/lib$$plugin.so || exit 1; \
	done
	$(INSTALL) -m 644 SDK/include/widgethost/provider.h $(ROOT)/include/widgethost/provider.h
	$(INSTALL) -d $(ROOT)/include/widgethost/ext
	$(INSTALL) -m 644 SDK/include/widgethost/ext/templates.h $(ROOT)/include/widgethost/ext/templates.h
	sed -e 's|^prefix=.*|prefix=$(PREFIX)|' SDK/widgethost-provider.pc > $(ROOT)/lib/pkgconfig/widgethost-provider.pc
	$(MAKE) -C SDK/client install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	sed -e 's|^ExecStart=.*|ExecStart=$(PREFIX)/bin/widgethost run|' \
	    -e 's|^# widgethost-runner must sit next to widgethost.*|# widgethost finds its runner in $(PREFIX)/libexec/widgethost/.|' \
	    -e 's|^#   cp widgethost.service ~/.config/systemd/user/|#   (installed in $(PREFIX)/lib/systemd/user/)|' \
	    samples/systemd/widgethost.service > $(ROOT)/lib/systemd/user/widgethost.service
	python3 packaging/man.py $(BINDIR_BUILT)/widgethost $(ROOT)/share/man/man1 "$(version)" > /dev/null
	$(BINDIR_BUILT)/widgethost --generate-completion-script bash > $(ROOT)/share/bash-completion/completions/widgethost
	$(BINDIR_BUILT)/widgethost --generate-completion-script zsh > $(ROOT)/share/zsh/site-functions/_widgethost
	$(BINDIR_BUILT)/widgethost --generate-completion-script fish > $(ROOT)/share/fish/vendor_completions.d/widgethost.fish
	rm -rf $(ROOT)/share/widgethost/rust $(ROOT)/share/widgethost/WidgetHostKit
	mkdir -p $(ROOT)/share/widgethost/rust
	cp -R SDK/rust/Cargo.toml SDK/rust/Cargo.lock SDK/rust/README.md SDK/rust/src SDK/rust/tests \
	    $(ROOT)/share/widgethost/rust/
	cp -RL SDK/WidgetHostKit $(ROOT)/share/widgethost/WidgetHostKit
	rm -rf $(ROOT)/share/widgethost/WidgetHostKit/.build
	$(INSTALL) -m 644 README.md docs/*.md $(ROOT)/share/doc/widgethost/
	@echo "installed widgethost $(version) in $(ROOT)"

uninstall:
	rm -f $(ROOT)/bin/widgethost $(ROOT)/include/widgethost/provider.h $(ROOT)/include/widgethost/center.h \
	    $(ROOT)/include/widgethost/ext/templates.h \
	    $(ROOT)/lib/pkgconfig/widgethost-provider.pc $(ROOT)/lib/pkgconfig/widgethost-center.pc \
	    $(ROOT)/lib/libwidgethost-center.* $(ROOT)/lib/systemd/user/widgethost.service \
	    $(ROOT)/share/man/man1/widgethost*.1 $(ROOT)/share/bash-completion/completions/widgethost \
	    $(ROOT)/share/zsh/site-functions/_widgethost $(ROOT)/share/fish/vendor_completions.d/widgethost.fish
	rm -rf $(ROOT)/libexec/widgethost $(ROOT)/lib/widgethost $(ROOT)/share/widgethost $(ROOT)/share/doc/widgethost
	rmdir $(ROOT)/include/widgethost/ext 2>/dev/null || true

# The .deb: the release build installed into a staging root with PREFIX=/usr.
DEB_ROOT := dist/deb-root
deb: $(BUILD_STEP)
	rm -rf $(DEB_ROOT) && mkdir -p $(DEB_ROOT)/DEBIAN dist
	$(MAKE) install PREFIX=/usr DESTDIR=$(abspath $(DEB_ROOT)) BIN=$(BINDIR_BUILT)
	# Debug information stays in the build; the package ships stripped
	# programs (the dynamic symbol tables, which the runner's clock
	# interposition needs, are kept).
	strip --strip-unneeded $(DEB_ROOT)/usr/bin/widgethost $(DEB_ROOT)/usr/libexec/widgethost/widgethost-runner \
	    $(DEB_ROOT)/usr/lib/widgethost/plugins/*.so
	sh packaging/deb-control.sh $(DEB_ROOT) "$(version)" > $(DEB_ROOT)/DEBIAN/control
	dpkg-deb --root-owner-group --build $(DEB_ROOT) dist/widgethost_$(version)_$$(dpkg --print-architecture).deb

clean:
	rm -rf $(SCRATCH) dist
	$(MAKE) -C SDK/client clean

.PHONY: all build install uninstall deb clean
