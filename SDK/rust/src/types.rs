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

/// A configuration parameter a kind accepts. The host checks an instance's
/// configuration against them and passes every parameter, defaults filled
/// in, as [`Context::configuration_json`].
#[derive(Debug, Clone, Copy)]
pub struct Parameter {
    /// Unique in the kind: `[A-Za-z_][A-Za-z0-9_]*`.
    pub name: &'static str,
    pub kind: ParameterType,
    /// The default as a JSON literal of the type (`"\"Paris\""`, `"3"`,
    /// `"true"`); `None` means required.
    pub default_json: Option<&'static str>,
    /// One line for people configuring an instance.
    pub description: Option<&'static str>,
}

/// One widget kind (WidgetKit: one `Widget` of a `WidgetBundle`).
#[derive(Clone, Copy)]
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
    /// The kind needs the network (without it the sandbox gives none).
    pub needs_network: bool,
    pub provider: &'static dyn TimelineProvider,
}

impl Kind {
    /// A kind without description, parameters or network.
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
            provider,
        }
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
