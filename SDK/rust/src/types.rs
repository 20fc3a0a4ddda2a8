//! The safe types a provider works with.

use crate::abi;
use crate::TimelineProvider;

/// A widget family (size), WidgetKit's `WidgetFamily`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    SystemSmall,
    SystemMedium,
    SystemLarge,
    SystemExtraLarge,
    AccessoryCircular,
    AccessoryRectangular,
    AccessoryInline,
}

impl Family {
    /// Every family, in WidgetKit's order.
    pub const ALL: [Family; 7] = [
        Family::SystemSmall,
        Family::SystemMedium,
        Family::SystemLarge,
        Family::SystemExtraLarge,
        Family::AccessoryCircular,
        Family::AccessoryRectangular,
        Family::AccessoryInline,
    ];

    /// The family's `wh_family` bit.
    pub const fn bit(self) -> u32 {
        match self {
            Family::SystemSmall => abi::WH_FAMILY_SYSTEM_SMALL,
            Family::SystemMedium => abi::WH_FAMILY_SYSTEM_MEDIUM,
            Family::SystemLarge => abi::WH_FAMILY_SYSTEM_LARGE,
            Family::SystemExtraLarge => abi::WH_FAMILY_SYSTEM_EXTRA_LARGE,
            Family::AccessoryCircular => abi::WH_FAMILY_ACCESSORY_CIRCULAR,
            Family::AccessoryRectangular => abi::WH_FAMILY_ACCESSORY_RECTANGULAR,
            Family::AccessoryInline => abi::WH_FAMILY_ACCESSORY_INLINE,
        }
    }

    /// The family of a single `wh_family` bit, if it is one.
    pub fn from_bit(bit: u32) -> Option<Family> {
        Family::ALL.into_iter().find(|family| family.bit() == bit)
    }

    /// WidgetKit's name, e.g. `"systemSmall"` (the CLI's `--family` value).
    pub const fn name(self) -> &'static str {
        match self {
            Family::SystemSmall => "systemSmall",
            Family::SystemMedium => "systemMedium",
            Family::SystemLarge => "systemLarge",
            Family::SystemExtraLarge => "systemExtraLarge",
            Family::AccessoryCircular => "accessoryCircular",
            Family::AccessoryRectangular => "accessoryRectangular",
            Family::AccessoryInline => "accessoryInline",
        }
    }
}

/// A set of families (the `families` bits of a kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Families(pub u32);

impl Families {
    pub const SYSTEM_SMALL: Families = Families(abi::WH_FAMILY_SYSTEM_SMALL);
    pub const SYSTEM_MEDIUM: Families = Families(abi::WH_FAMILY_SYSTEM_MEDIUM);
    pub const SYSTEM_LARGE: Families = Families(abi::WH_FAMILY_SYSTEM_LARGE);
    pub const SYSTEM_EXTRA_LARGE: Families = Families(abi::WH_FAMILY_SYSTEM_EXTRA_LARGE);
    pub const ACCESSORY_CIRCULAR: Families = Families(abi::WH_FAMILY_ACCESSORY_CIRCULAR);
    pub const ACCESSORY_RECTANGULAR: Families = Families(abi::WH_FAMILY_ACCESSORY_RECTANGULAR);
    pub const ACCESSORY_INLINE: Families = Families(abi::WH_FAMILY_ACCESSORY_INLINE);
    /// Every family of ABI v1.
    pub const ALL: Families = Families(abi::WH_FAMILY_ALL_V1);

    /// The union of two sets (usable in a `static`).
    pub const fn with(self, other: Families) -> Families {
        Families(self.0 | other.0)
    }

    /// Whether `family` is in the set.
    pub const fn contains(self, family: Family) -> bool {
        self.0 & family.bit() != 0
    }
}

impl core::ops::BitOr for Families {
    type Output = Families;
    fn bitor(self, other: Families) -> Families {
        self.with(other)
    }
}

/// The type of a configuration parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParameterType {
    String,
    Integer,
    Number,
    Boolean,
}

impl ParameterType {
    pub(crate) const fn raw(self) -> u32 {
        match self {
            ParameterType::String => abi::WH_PARAM_STRING,
            ParameterType::Integer => abi::WH_PARAM_INTEGER,
            ParameterType::Number => abi::WH_PARAM_NUMBER,
            ParameterType::Boolean => abi::WH_PARAM_BOOLEAN,
        }
    }
}

/// One allowed value of a string [`Parameter`] (an `AppEnum` case), with
/// the title people see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Choice {
    /// The value the configuration holds, a plain string (not JSON).
    pub value: &'static str,
    /// The title shown in forms (`None`: the value is shown).
    pub title: Option<&'static str>,
}

impl Choice {
    /// A choice shown as its value.
    pub const fn new(value: &'static str) -> Choice {
        Choice { value, title: None }
    }

    /// A choice with a title for people, e.g. `Choice::titled("metric", "Metres")`.
    pub const fn titled(value: &'static str, title: &'static str) -> Choice {
        Choice { value, title: Some(title) }
    }
}

/// A configuration parameter a kind accepts. The host checks an instance's
/// configuration against them and passes every parameter, defaults filled
/// in, as [`Context::configuration_json`].
///
/// Build one with a constructor and the `const` builder methods (the type is
/// `#[non_exhaustive]`, so fields added by later SDK versions never break
/// your code):
///
/// ```
/// use widgethost::{Choice, Parameter};
/// static UNITS: [Choice; 2] = [Choice::titled("metric", "Metres"), Choice::titled("imperial", "Feet")];
/// static PARAMETERS: [Parameter; 2] = [
///     Parameter::string("units").default_json("\"metric\"").title("Units").choices(&UNITS),
///     Parameter::integer("count").default_json("3").description("How many entries"),
/// ];
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Parameter {
    /// Unique in the kind: `[A-Za-z_][A-Za-z0-9_]*`.
    pub name: &'static str,
    pub kind: ParameterType,
    /// The default as a JSON literal of the type (`"\"Paris\""`, `"3"`,
    /// `"true"`); `None` means required (unless [`optional`](Self::optional)).
    pub default_json: Option<&'static str>,
    /// One line for people configuring an instance.
    pub description: Option<&'static str>,
    /// (SDK 1.3) The title shown in forms (an AppIntents
    /// `@Parameter(title:)`); `None`: the name is shown.
    pub title: Option<&'static str>,
    /// (SDK 1.3) The allowed values of a string parameter (an `AppEnum`'s
    /// cases); empty: any value of the type. A default must be one of them.
    pub choices: &'static [Choice],
    /// (SDK 1.3) May be left out: with no default, the configuration has no
    /// member for it unless the instance sets one (`WH_PARAMETER_OPTIONAL`).
    pub optional: bool,
}

impl Parameter {
    /// A required parameter of type `kind` named `name`, with nothing else.
    pub const fn new(name: &'static str, kind: ParameterType) -> Parameter {
        Parameter {
            name,
            kind,
            default_json: None,
            description: None,
            title: None,
            choices: &[],
            optional: false,
        }
    }

    /// A string parameter.
    pub const fn string(name: &'static str) -> Parameter {
        Parameter::new(name, ParameterType::String)
    }

    /// An integer parameter.
    pub const fn integer(name: &'static str) -> Parameter {
        Parameter::new(name, ParameterType::Integer)
    }

    /// A number parameter.
    pub const fn number(name: &'static str) -> Parameter {
        Parameter::new(name, ParameterType::Number)
    }

    /// A boolean parameter.
    pub const fn boolean(name: &'static str) -> Parameter {
        Parameter::new(name, ParameterType::Boolean)
    }

    /// The same parameter with a default, a JSON literal of its type.
    pub const fn default_json(mut self, literal: &'static str) -> Parameter {
        self.default_json = Some(literal);
        self
    }

    /// The same parameter with a one-line description.
    pub const fn description(mut self, text: &'static str) -> Parameter {
        self.description = Some(text);
        self
    }

    /// The same parameter with a title for forms.
    pub const fn title(mut self, text: &'static str) -> Parameter {
        self.title = Some(text);
        self
    }

    /// The same parameter restricted to `choices` (string parameters only:
    /// the plugin is refused otherwise, naming the parameter).
    pub const fn choices(mut self, choices: &'static [Choice]) -> Parameter {
        self.choices = choices;
        self
    }

    /// The same parameter, optional.
    pub const fn optional(mut self) -> Parameter {
        self.optional = true;
        self
    }
}

/// One widget kind (WidgetKit: one `Widget` of a `WidgetBundle`).
///
/// Build one with [`Kind::new`] and the `const` builder methods (the type is
/// `#[non_exhaustive]`, so fields added by later SDK versions never break
/// your code):
///
/// ```ignore
/// static KIND: Kind = Kind::new("com.example.weather", "Weather", Families::SYSTEM_SMALL, &Weather)
///     .description("Today's weather.")
///     .parameters(&PARAMETERS)
///     .needs_network();
/// ```
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct Kind {
    /// Unique id, e.g. `"com.example.weather"` (WidgetKit's `kind`).
    pub id: &'static str,
    /// Name shown in the gallery.
    pub display_name: &'static str,
    /// One sentence shown in the gallery.
    pub description: Option<&'static str>,
    /// The families the kind supports (at least one); the host calls no other.
    pub families: Families,
    pub parameters: &'static [Parameter],
    /// The kind needs the network (without it the sandbox gives none):
    /// `WH_KIND_NEEDS_NETWORK`.
    pub needs_network: bool,
    /// (SDK 1.3) The answers depend only on the family, the configuration
    /// and `Context::now`, so the host may reuse one answer for identical
    /// calls: `WH_KIND_DETERMINISTIC`.
    pub deterministic: bool,
    /// (SDK 1.3) Every call must start from a fresh process, never a reused
    /// warm worker: `WH_KIND_FRESH_PROCESS`.
    pub fresh_process: bool,
    /// (SDK 1.3) The kind accepts push updates (WidgetKit's
    /// `pushHandler(_:)`): `WH_KIND_PUSH`.
    pub push: bool,
    pub provider: &'static dyn TimelineProvider,
}

impl Kind {
    /// A kind without description, parameters, network or other flags.
    pub const fn new(
        id: &'static str,
        display_name: &'static str,
        families: Families,
        provider: &'static dyn TimelineProvider,
    ) -> Kind {
        Kind {
            id,
            display_name,
            description: None,
            families,
            parameters: &[],
            needs_network: false,
            deterministic: false,
            fresh_process: false,
            push: false,
            provider,
        }
    }

    /// The same kind with a one-sentence description.
    pub const fn description(mut self, text: &'static str) -> Kind {
        self.description = Some(text);
        self
    }

    /// The same kind with configuration parameters.
    pub const fn parameters(mut self, parameters: &'static [Parameter]) -> Kind {
        self.parameters = parameters;
        self
    }

    /// The same kind, given the network by the sandbox.
    pub const fn needs_network(mut self) -> Kind {
        self.needs_network = true;
        self
    }

    /// The same kind, declared deterministic.
    pub const fn deterministic(mut self) -> Kind {
        self.deterministic = true;
        self
    }

    /// The same kind, called in a fresh process every time.
    pub const fn fresh_process(mut self) -> Kind {
        self.fresh_process = true;
        self
    }

    /// The same kind, accepting push updates.
    pub const fn push(mut self) -> Kind {
        self.push = true;
        self
    }

    /// The kind's `wh_kind_flags` bits.
    pub const fn flags(&self) -> u32 {
        (if self.needs_network { abi::WH_KIND_NEEDS_NETWORK } else { 0 })
            | (if self.deterministic { abi::WH_KIND_DETERMINISTIC } else { 0 })
            | (if self.fresh_process { abi::WH_KIND_FRESH_PROCESS } else { 0 })
            | (if self.push { abi::WH_KIND_PUSH } else { 0 })
    }
}

/// The context of a warm-up (see [`Plugin::warm_up`]).
#[derive(Debug, Clone)]
pub struct WarmUpContext {
    pub now: f64,
    pub locale: String,
    pub data_directory: String,
}

/// The plugin: its identity and kinds. Export it with
/// [`export_plugin!`](crate::export_plugin).
#[derive(Clone, Copy)]
pub struct Plugin {
    /// Reverse-DNS id, e.g. `"com.example.weather"`.
    pub id: &'static str,
    pub name: &'static str,
    pub version: &'static str,
    pub vendor: Option<&'static str>,
    /// At least one.
    pub kinds: &'static [Kind],
    /// Optional: work done once in the host's fork server before the calls
    /// are forked from it (docs/abi.md, "The warm-up"). Start no threads,
    /// write nothing; calls must work without it.
    pub warm_up: Option<fn(&WarmUpContext)>,
}

/// Everything a provider needs to answer one call (WidgetKit's
/// `TimelineProviderContext`, plus the time and the configuration).
#[derive(Debug, Clone)]
pub struct Context {
    /// The kind's id.
    pub kind: String,
    /// The family to render for.
    pub family: Family,
    /// In the widget gallery: answer fast, with sample data if need be.
    pub is_preview: bool,
    /// Display size in points (informational).
    pub display_size: (f64, f64),
    /// The current time, seconds since the Unix epoch. Use it instead of
    /// the system clock.
    pub now: f64,
    /// Seconds the call has, counted from its start.
    pub timeout: f64,
    /// The instance's configuration: a JSON object with every parameter.
    pub configuration_json: String,
    /// BCP 47, e.g. `"en-US"`.
    pub locale: String,
    /// The only directory the plugin may write (also the working directory).
    pub data_directory: String,
    /// (SDK 1.4) The kind's push token (64 hex digits) when the kind is
    /// [`Kind::push`] and the daemon runs it: send it to your server, which
    /// pushes to the host with it. `None` otherwise.
    pub push_token: Option<String>,
}

impl Context {
    /// The value of configuration parameter `name`, if it is a string.
    pub fn string(&self, name: &str) -> Option<String> {
        match crate::json::member(&self.configuration_json, name)? {
            crate::json::Scalar::String(value) => Some(value),
            _ => None,
        }
    }

    /// The value of configuration parameter `name`, if it is a number
    /// (integer parameters included).
    pub fn number(&self, name: &str) -> Option<f64> {
        match crate::json::member(&self.configuration_json, name)? {
            crate::json::Scalar::Number(value) => Some(value),
            _ => None,
        }
    }

    /// The value of configuration parameter `name`, if it is a boolean.
    pub fn boolean(&self, name: &str) -> Option<bool> {
        match crate::json::member(&self.configuration_json, name)? {
            crate::json::Scalar::Boolean(value) => Some(value),
            _ => None,
        }
    }
}

/// WidgetKit's `TimelineEntryRelevance`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Relevance {
    /// At least 0.
    pub score: f64,
    /// Seconds from the entry's date the score holds; 0: until the next entry.
    pub duration: f64,
}

/// One timeline entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// When it becomes the displayed entry (seconds since the epoch).
    pub date: f64,
    /// The content: a JSON object (see [`json::quote`](crate::json::quote)
    /// for strings inside it).
    pub content: String,
    pub relevance: Option<Relevance>,
}

impl Entry {
    /// An entry at `date` with `content` (a JSON object).
    pub fn new(date: f64, content: impl Into<String>) -> Entry {
        Entry {
            date,
            content: content.into(),
            relevance: None,
        }
    }

    /// The same entry with a relevance.
    pub fn with_relevance(mut self, score: f64, duration: f64) -> Entry {
        self.relevance = Some(Relevance { score, duration });
        self
    }
}

/// When to ask for the next timeline (WidgetKit's `TimelineReloadPolicy`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReloadPolicy {
    /// Once the last entry's date has passed.
    AtEnd,
    /// At this date (seconds since the epoch), not before.
    After(f64),
    /// Only when an app asks for a reload.
    Never,
}

/// Entries and a reload policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// One or more, sorted by date.
    pub entries: Vec<Entry>,
    pub policy: ReloadPolicy,
}

impl Timeline {
    pub fn new(entries: Vec<Entry>, policy: ReloadPolicy) -> Timeline {
        Timeline { entries, policy }
    }
}

/// A provider's failure: the host reports `pluginError(code, message)`,
/// keeps showing the previous timeline and retries with back-off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderError {
    /// The plugin's own code, non-zero (0 is sent as 1).
    pub code: i32,
    pub message: String,
}

impl ProviderError {
    pub fn new(code: i32, message: impl Into<String>) -> ProviderError {
        ProviderError {
            code,
            message: message.into(),
        }
    }
}

impl core::fmt::Display for ProviderError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ProviderError {}
