//! A widgethost timeline-provider plugin written in Rust, with the SDK's
//! `widgethost` crate (SDK/rust) and nothing else.
//!
//! One kind, `org.example.rust.tides`: the water height at a harbour, from a
//! one-constituent (M2, 12.42 h) tide model. The timeline has an entry now and
//! one at each of the next four turning points (high and low water), and asks
//! for a new timeline when the last entry is reached (`ReloadPolicy::AtEnd`).
//! The model is a demo, not a tide table.
//!
//! The crate exports `widgethost_provider_entry` (`export_plugin!`), builds the
//! C descriptor, calls the completion once and turns a panic into an error
//! result. Everything is computed from `context.now`, never from the system
//! clock.
//!
//! Build: `cargo build --release --offline` -> `target/release/libtides.so`.

use widgethost::{
    Choice, Context, Entry, Families, Family, Kind, Parameter, Plugin, ProviderError,
    ReloadPolicy, Timeline, TimelineProvider,
};

/// The tides provider (stateless: it keeps nothing between calls, which may
/// share a warm worker process).
pub struct Tides;

static UNITS: [Choice; 2] = [Choice::titled("metric", "Metres"), Choice::titled("imperial", "Feet")];

static PARAMETERS: [Parameter; 1] = [Parameter::string("units")
    .default_json("\"metric\"")
    .title("Units")
    .description("Metres or feet")
    .choices(&UNITS)];

static PLUGIN: Plugin = Plugin {
    id: "org.example.rust.tides",
    name: "Tides (Rust sample)",
    version: "1.0.0",
    vendor: Some("Example Org"),
    kinds: &[Kind::new(
        "org.example.rust.tides",
        "Tides",
        Families::SYSTEM_SMALL
            .with(Families::SYSTEM_MEDIUM)
            .with(Families::ACCESSORY_RECTANGULAR)
            .with(Families::ACCESSORY_INLINE),
        &Tides,
    )
    .description("Water height and the next high or low water.")
    .parameters(&PARAMETERS)
    // Its answers depend only on the family, the configuration and
    // `context.now`: the host may reuse one for identical calls.
    .deterministic()],
    warm_up: None,
};

widgethost::export_plugin!(PLUGIN);

// How the kind looks in `widgethost preview` and the dashboard (the
// templates extension): Mustache over the entry's members. The accessory
// families get their own; `Families(0)` is every other family.
static TEMPLATES: [widgethost::templates::Template; 3] = [
    widgethost::templates::Template {
        kind: "org.example.rust.tides",
        families: Families(0),
        source: "<style>.t{height:100%;box-sizing:border-box;padding:14px;\
                 background:linear-gradient(180deg,#e0f7ff,#2a7ab0);color:#06263d}\
                 .t b{display:block;font-size:34px}.t span{font-size:12px}</style>\
                 <div class=\"t\"><span>{{station}}</span><b>{{height}} {{unit}}</b>\
                 <span>{{trend}}, {{next}} water next ({{nextHeight}} {{unit}})</span></div>",
    },
    widgethost::templates::Template {
        kind: "org.example.rust.tides",
        families: Families::ACCESSORY_RECTANGULAR,
        source: "<div style=\"padding:8px 10px\"><b>{{height}} {{unit}}</b><br>{{trend}} to {{next}}</div>",
    },
    widgethost::templates::Template {
        kind: "org.example.rust.tides",
        families: Families::ACCESSORY_INLINE,
        source: "<div style=\"padding:4px 6px;white-space:nowrap\">Tide {{height}} {{unit}} {{trend}}</div>",
    },
];
widgethost::export_templates!(TEMPLATES);

// ---------------------------------------------------------------------------
// The tide model
// ---------------------------------------------------------------------------

/// Period of the principal lunar semi-diurnal constituent, M2, in seconds.
const M2_PERIOD: f64 = 12.420_601_2 * 3600.0;
/// A reference high water (2023-11-14 22:13:20 UTC, arbitrary for the demo).
const REFERENCE_HIGH: f64 = 1_700_000_000.0;
const MEAN_LEVEL_M: f64 = 4.0;
const AMPLITUDE_M: f64 = 2.5;

fn height_at(t: f64) -> f64 {
    MEAN_LEVEL_M
        + AMPLITUDE_M * (2.0 * core::f64::consts::PI * (t - REFERENCE_HIGH) / M2_PERIOD).cos()
}

/// Index of the first turning point strictly after `t`: even = high water,
/// odd = low water; turning point `k` is at REFERENCE_HIGH + k * M2_PERIOD/2.
fn next_turning_index(t: f64) -> i64 {
    let half = M2_PERIOD / 2.0;
    // The epsilon puts a date that *is* a turning point before the next one.
    ((t - REFERENCE_HIGH) / half + 1e-9).floor() as i64 + 1
}

fn turning_date(k: i64) -> f64 {
    REFERENCE_HIGH + k as f64 * (M2_PERIOD / 2.0)
}

/// The entry content at `date`: a JSON object (Rust's float formatting does
/// not depend on the C locale).
fn content_at(date: f64, imperial: bool, family: Family) -> String {
    let k = next_turning_index(date);
    let next_high = k % 2 == 0;
    let (factor, unit) = if imperial {
        (3.280_84, "ft")
    } else {
        (1.0, "m")
    };
    format!(
        "{{\"station\":\"Example Harbour\",\"height\":{:.2},\"unit\":\"{}\",\"trend\":\"{}\",\
         \"next\":\"{}\",\"nextDate\":{:.0},\"nextHeight\":{:.2},\"family\":\"{}\"}}",
        height_at(date) * factor,
        unit,
        if next_high { "rising" } else { "falling" },
        if next_high { "high" } else { "low" },
        turning_date(k),
        height_at(turning_date(k)) * factor,
        family.name(),
    )
}

// ---------------------------------------------------------------------------
// The provider
// ---------------------------------------------------------------------------

/// The `units` parameter: `true` for imperial. The host checked its type and
/// filled in the default; anything but "metric" or "imperial" is an error.
fn wants_imperial(context: &Context) -> Result<bool, ProviderError> {
    match context.string("units").as_deref() {
        None | Some("metric") => Ok(false),
        Some("imperial") => Ok(true),
        Some(other) => Err(ProviderError::new(
            1,
            format!("units must be \"metric\" or \"imperial\", not {other:?}"),
        )),
    }
}

impl TimelineProvider for Tides {
    fn placeholder(&self, context: &Context) -> Entry {
        Entry::new(
            context.now,
            "{\"station\":\"Example Harbour\",\"height\":4.00,\"unit\":\"m\",\"trend\":\"rising\",\
             \"next\":\"high\",\"nextDate\":0,\"nextHeight\":6.50,\"family\":\"placeholder\"}",
        )
    }

    fn snapshot(&self, context: &Context) -> Result<Entry, ProviderError> {
        let imperial = wants_imperial(context)?;
        Ok(Entry::new(
            context.now,
            content_at(context.now, imperial, context.family),
        ))
    }

    fn timeline(&self, context: &Context) -> Result<Timeline, ProviderError> {
        let imperial = wants_imperial(context)?;
        let mut entries = vec![Entry::new(
            context.now,
            content_at(context.now, imperial, context.family),
        )];
        let mut k = next_turning_index(context.now);
        // Skip a turning point closer than five minutes to now (the host
        // warns about entries packed closer than that).
        if turning_date(k) - context.now < widgethost::abi::WH_MIN_ENTRY_SPACING {
            k += 1;
        }
        for i in 0..4 {
            let date = turning_date(k + i);
            entries.push(Entry::new(date, content_at(date, imperial, context.family)));
        }
        Ok(Timeline::new(entries, ReloadPolicy::AtEnd))
    }
}

// ---------------------------------------------------------------------------
// Tests: the provider's answers (the crate's own tests cover the C ABI).
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    fn context(configuration_json: &str) -> Context {
        Context {
            kind: "org.example.rust.tides".into(),
            family: Family::SystemSmall,
            is_preview: false,
            display_size: (170.0, 170.0),
            now: 1_700_003_600.0,
            timeout: 5.0,
            configuration_json: configuration_json.into(),
            locale: "en-US".into(),
            data_directory: "/tmp".into(),
        }
    }

    #[test]
    fn placeholder_and_snapshot_answer_an_object() {
        let c = context("{}");
        for entry in [Tides.placeholder(&c), Tides.snapshot(&c).unwrap()] {
            assert_eq!(entry.date, c.now);
            assert!(entry.content.starts_with('{') && entry.content.ends_with('}'));
        }
    }

    #[test]
    fn timeline_is_sorted_spaced_and_at_end() {
        let t = Tides.timeline(&context("{\"units\":\"metric\"}")).unwrap();
        assert_eq!(t.policy, ReloadPolicy::AtEnd);
        assert_eq!(t.entries.len(), 5);
        assert_eq!(t.entries[0].date, 1_700_003_600.0);
        for pair in t.entries.windows(2) {
            assert!(pair[1].date - pair[0].date >= 300.0, "{pair:?}");
        }
        // Turning points are at the model's extremes.
        assert!(
            t.entries[1].content.contains("\"height\":1.50")
                || t.entries[1].content.contains("\"height\":6.50")
        );
        assert!(t
            .entries
            .iter()
            .all(|e| e.date.is_finite() && e.content.contains("\"unit\":\"m\"")));
    }

    #[test]
    fn imperial_units_and_a_bad_value() {
        let s = Tides
            .snapshot(&context("{\"units\": \"imperial\"}"))
            .unwrap();
        assert!(s.content.contains("\"unit\":\"ft\""), "{s:?}");
        let e = Tides
            .timeline(&context("{\"units\":\"furlongs\"}"))
            .unwrap_err();
        assert_eq!(e.code, 1);
        assert!(e.message.contains("furlongs"));
    }
}
