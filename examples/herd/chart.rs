//! SVG line charts, drawn by plotters' SVG backend: text is written as SVG `<text>`, so no
//! system font or C library is needed to make them.
//!
//! Every line of a chart differs from the others in colour *and* in dash pattern, so that each
//! can be told apart in grey, in print, and by a reader who does not see the colours apart.
//! plotters' SVG backend strokes every path solid, and its `DashedLineSeries` cuts a line into
//! one `<polyline>` per dash (1,900 of them made the outage chart 233 KB instead of 17 KB), so
//! each line's one `<polyline>` is given its dash afterwards, as an SVG `stroke-dasharray`
//! ([`dashed`]).

use std::borrow::Cow;
use std::error::Error;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

/// One line: its legend name and its points.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// How a line is drawn: its colour and its dash pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    /// Red, green, blue.
    pub color: (u8, u8, u8),
    /// The SVG `stroke-dasharray`: dash, gap, dash, gap… in pixels; empty for a solid line.
    pub dash: &'static [u8],
}

impl Style {
    fn rgb(self) -> RGBColor {
        let (r, g, b) = self.color;
        RGBColor(r, g, b)
    }

    /// The colour as plotters writes it in a `stroke` attribute: `#0072B2`.
    fn hex(self) -> String {
        let (r, g, b) = self.color;
        format!("#{r:02X}{g:02X}{b:02X}")
    }
}

/// The styles of a chart's lines, in order: the Okabe–Ito palette (distinct for the common
/// kinds of colour blindness; its yellow, which does not read on white, left out, and its
/// black made a dark grey, so that no line has the axes' colour), each with a dash of its own.
/// The herd's strategies take them in `Strategy::ALL`'s order: `full`, the default of
/// `#[retry]`, is the solid blue line.
pub const STYLES: [Style; 7] = [
    // Dotted dark grey.
    Style {
        color: (51, 51, 51),
        dash: &[2, 4],
    },
    // Long-dashed orange.
    Style {
        color: (230, 159, 0),
        dash: &[16, 5],
    },
    // Dashed vermillion.
    Style {
        color: (213, 94, 0),
        dash: &[8, 4],
    },
    // Solid blue.
    Style {
        color: (0, 114, 178),
        dash: &[],
    },
    // Dash-dotted bluish green.
    Style {
        color: (0, 158, 115),
        dash: &[10, 3, 2, 3],
    },
    // Dash-dot-dotted reddish purple.
    Style {
        color: (204, 121, 167),
        dash: &[10, 3, 2, 3, 2, 3],
    },
    // Long-and-short-dashed sky blue.
    Style {
        color: (86, 180, 233),
        dash: &[16, 4, 4, 4],
    },
];

/// The width of every line, and the length of a legend's sample of it (long enough to show
/// each dash pattern whole).
const LINE_WIDTH: u32 = 2;
const SAMPLE: i32 = 36;

/// How the axes are drawn.
#[derive(Clone, Copy, Debug, Default)]
pub struct Axes {
    /// A logarithmic y axis (values below 1 are drawn at 1).
    pub log_y: bool,
    /// Cut the x axis here.
    pub x_max: Option<f64>,
    /// Label the x axis at whole numbers only (a few points at 1, 2, 3…, whose labels would
    /// otherwise round half-way ticks to the same number).
    pub whole_x: bool,
}

/// A line chart with a title, axis labels (with units) and a legend, one line per series.
pub fn line_chart(
    path: &Path,
    title: &str,
    (x_label, y_label): (&str, &str),
    series: &[Series],
    axes: Axes,
) -> Result<(), Box<dyn Error>> {
    let points = || series.iter().flat_map(|s| s.points.iter());
    let x_max = axes
        .x_max
        .unwrap_or_else(|| points().map(|p| p.0).fold(0.0, f64::max))
        .max(1.0);
    let y_max = points().map(|p| p.1).fold(0.0, f64::max).max(1.0);
    render(path, series.len(), |root| {
        root.fill(&WHITE)?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(title, ("sans-serif", 26))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(90);
        let visible = |s: &Series| -> Vec<(f64, f64)> {
            s.points.iter().copied().filter(|p| p.0 <= x_max).collect()
        };
        macro_rules! draw {
            ($chart:expr, $y:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(x_label)
                    .y_desc(y_label)
                    .axis_desc_style(("sans-serif", 18))
                    .label_style(("sans-serif", 15))
                    .x_labels(if axes.whole_x { x_max as usize + 1 } else { 11 })
                    .x_label_formatter(&|x| format!("{x:.0}"))
                    .y_label_formatter(&|y| format!("{y:.0}"))
                    .light_line_style(WHITE.mix(0.0))
                    .draw()?;
                for (s, style) in series.iter().zip(STYLES) {
                    let line = visible(s).into_iter().map(|(x, y)| (x, $y(y)));
                    draw_line(&mut chart, line, &s.name, style)?;
                }
                chart
                    .configure_series_labels()
                    .legend_area_size(SAMPLE + 8)
                    .position(SeriesLabelPosition::UpperRight)
                    .label_font(("sans-serif", 16))
                    .background_style(WHITE.mix(0.9))
                    .border_style(BLACK)
                    .draw()?;
            }};
        }
        if axes.log_y {
            draw!(
                builder.build_cartesian_2d(0.0..x_max, (1.0..y_max * 1.5).log_scale())?,
                |y: f64| y.max(1.0)
            );
        } else {
            draw!(
                builder.build_cartesian_2d(0.0..x_max, 0.0..y_max * 1.08)?,
                |y: f64| y
            );
        }
        root.present()?;
        Ok(())
    })
}

/// Charts stacked one above the other on a shared x axis (cut at `x_max`), each with its
/// y label and its lines: the same styles in the same order in every panel, so that a line's
/// look names its series in all of them. The legend is drawn in the first.
pub fn panels_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    panels: &[(&str, Vec<Series>)],
    x_max: f64,
) -> Result<(), Box<dyn Error>> {
    let lines = panels.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
    let size = (960, 300 * panels.len().max(1) as u32 + 60);
    render_sized(path, lines, size, |root| {
        root.fill(&WHITE)?;
        let root = root.titled(title, ("sans-serif", 26))?;
        for (i, (area, (y_label, series))) in root
            .split_evenly((panels.len().max(1), 1))
            .into_iter()
            .zip(panels)
            .enumerate()
        {
            let y_max = series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .fold(0.0, f64::max)
                .max(1.0);
            let mut chart = ChartBuilder::on(&area)
                .margin(16)
                .x_label_area_size(48)
                .y_label_area_size(90)
                .build_cartesian_2d(0.0..x_max.max(1.0), 0.0..y_max * 1.08)?;
            chart
                .configure_mesh()
                .x_desc(x_label)
                .y_desc(*y_label)
                .axis_desc_style(("sans-serif", 18))
                .label_style(("sans-serif", 15))
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| format!("{y:.0}"))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            for (s, style) in series.iter().zip(STYLES) {
                let line = s.points.iter().copied().filter(|p| p.0 <= x_max);
                draw_line(&mut chart, line, &s.name, style)?;
            }
            if i == 0 {
                chart
                    .configure_series_labels()
                    .legend_area_size(SAMPLE + 8)
                    .position(SeriesLabelPosition::UpperRight)
                    .label_font(("sans-serif", 16))
                    .background_style(WHITE.mix(0.9))
                    .border_style(BLACK)
                    .draw()?;
            }
        }
        root.present()?;
        Ok(())
    })
}

/// Draw `series.len()` lines on `root` with `draw`, then write the SVG to `path`, each line
/// dashed in its style.
fn render(
    path: &Path,
    lines: usize,
    draw: impl FnOnce(DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), Box<dyn Error>>,
) -> Result<(), Box<dyn Error>> {
    render_sized(path, lines, (960, 540), draw)
}

/// [`render`] on a drawing of `size` pixels.
fn render_sized(
    path: &Path,
    lines: usize,
    size: (u32, u32),
    draw: impl FnOnce(DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), Box<dyn Error>>,
) -> Result<(), Box<dyn Error>> {
    if lines > STYLES.len() {
        return Err(format!("{lines} lines, but only {} line styles", STYLES.len()).into());
    }
    let mut svg = String::new();
    draw(SVGBackend::with_string(&mut svg, size).into_drawing_area())?;
    std::fs::write(path, dashed(&svg, &STYLES[..lines]).as_bytes())?;
    Ok(())
}

/// One line in `style`, and its entry in the legend: `name` beside a sample of the line.
fn draw_line<DB: DrawingBackend, CT: CoordTranslate>(
    chart: &mut ChartContext<'_, DB, CT>,
    points: impl Iterator<Item = CT::From> + Clone,
    name: &str,
    style: Style,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
    CT::From: Clone + 'static,
{
    let stroke = style.rgb().stroke_width(LINE_WIDTH);
    chart
        .draw_series(LineSeries::new(points, stroke))?
        .label(name)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + SAMPLE, y)], stroke));
    Ok(())
}

/// `svg` with the dash of each style given to the `<polyline>`s in its colour: a line and its
/// legend's sample (no other element of a chart has a line's colour).
pub fn dashed<'a>(svg: &'a str, styles: &[Style]) -> Cow<'a, str> {
    let dashes: Vec<(String, String)> = styles
        .iter()
        .filter(|s| !s.dash.is_empty())
        .map(|s| {
            let dash: Vec<String> = s.dash.iter().map(u8::to_string).collect();
            (
                format!("stroke=\"{}\"", s.hex()),
                format!(" stroke-dasharray=\"{}\"", dash.join(" ")),
            )
        })
        .collect();
    if dashes.is_empty() {
        return Cow::Borrowed(svg);
    }
    let mut out = String::with_capacity(svg.len() + 1024);
    let mut rest = svg;
    while let Some(start) = rest.find("<polyline ") {
        let end = rest[start..].find("/>").map_or(rest.len(), |e| start + e);
        let tag = &rest[start..end];
        out.push_str(&rest[..start]);
        match dashes.iter().find_map(|(stroke, dash)| {
            let at = tag.find(stroke.as_str())? + stroke.len();
            Some((at, dash))
        }) {
            Some((at, dash)) => {
                out.push_str(&tag[..at]);
                out.push_str(dash);
                out.push_str(&tag[at..]);
            }
            None => out.push_str(tag),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The complementary CDF of `sorted` (ascending) values: (value × `scale`, share of values
/// above it) on a log-spaced grid of 400 points, and at each of the 200 largest values so that
/// the tail's last steps are exact; the shares of 0 left out (a log axis has no 0).
pub fn ccdf(sorted: &[u64], scale: f64) -> Vec<(f64, f64)> {
    let (Some(&lo), Some(&hi)) = (sorted.first(), sorted.last()) else {
        return Vec::new();
    };
    let n = sorted.len() as f64;
    let (lo, hi) = ((lo.max(1) as f64).ln(), (hi.max(1) as f64).ln());
    let steps = 400;
    let grid = (0..=steps).map(|i| {
        (lo + (hi - lo) * f64::from(i) / f64::from(steps))
            .exp()
            .round() as u64
    });
    let top = sorted[sorted.len().saturating_sub(200)..].iter().copied();
    let mut xs: Vec<u64> = grid.chain(top).collect();
    xs.sort_unstable();
    xs.dedup();
    xs.into_iter()
        .map(|x| {
            let above = sorted.len() - sorted.partition_point(|&v| v <= x);
            (x as f64 * scale, above as f64 / n)
        })
        .filter(|p| p.1 > 0.0)
        .collect()
}

/// A share as a percentage with as many decimals as it needs: 10%, 1%, 0.1%, 0.01%.
fn percent(share: f64) -> String {
    let p = share * 100.0;
    let decimals = if p >= 1.0 {
        0
    } else {
        (-p.log10()).ceil() as usize
    };
    format!("{p:.decimals$}%")
}

/// A complementary-CDF chart: log-scaled value (x) against the log-scaled share of values above
/// it (y), one line per series, with a title, axis labels and a legend.
pub fn ccdf_chart(
    path: &Path,
    title: &str,
    (x_label, y_label): (&str, &str),
    series: &[Series],
) -> Result<(), Box<dyn Error>> {
    let points = || series.iter().flat_map(|s| s.points.iter());
    let x_min = points().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_max = points().map(|p| p.0).fold(0.0, f64::max);
    let y_min = points().map(|p| p.1).fold(1.0, f64::min);
    let (x_min, x_max) = if x_min.is_finite() && x_max > x_min {
        (x_min * 0.8, x_max * 1.25)
    } else {
        (1.0, 10.0)
    };
    render(path, series.len(), |root| {
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 26))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(90)
            .build_cartesian_2d((x_min..x_max).log_scale(), (y_min * 0.5..1.5).log_scale())?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .axis_desc_style(("sans-serif", 18))
            .label_style(("sans-serif", 15))
            .x_label_formatter(&|x| format!("{x}"))
            .y_label_formatter(&|y| percent(*y))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (s, style) in series.iter().zip(STYLES) {
            draw_line(&mut chart, s.points.iter().copied(), &s.name, style)?;
        }
        chart
            .configure_series_labels()
            .legend_area_size(SAMPLE + 8)
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 16))
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outage::Outage;
    use crate::strategy::Strategy;

    /// Tags open and close in order; text is where it should be.
    fn well_formed(svg: &str) -> Result<(), String> {
        let mut stack: Vec<String> = Vec::new();
        let mut rest = svg;
        while let Some(open) = rest.find('<') {
            let close = rest[open..].find('>').ok_or("unclosed tag")? + open;
            let tag = &rest[open + 1..close];
            rest = &rest[close + 1..];
            if tag.starts_with('?') || tag.starts_with('!') || tag.ends_with('/') {
                continue;
            }
            let name: String = tag
                .trim_start_matches('/')
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_owned();
            if tag.starts_with('/') {
                match stack.pop() {
                    Some(open) if open == name => {}
                    other => return Err(format!("</{name}> closes {other:?}")),
                }
            } else {
                stack.push(name);
            }
        }
        if stack.is_empty() {
            Ok(())
        } else {
            Err(format!("left open: {stack:?}"))
        }
    }

    /// A small outage run of every strategy, charted as the demo charts it: the series and
    /// the SVG. `test` names the temporary folder (removed before returning).
    fn outage_chart(test: &str) -> (Vec<Series>, String) {
        let outage = Outage {
            clients: 300,
            capacity: 100,
            ..Outage::default()
        };
        let series: Vec<Series> = Strategy::ALL
            .iter()
            .map(|&s| Series {
                name: s.name().to_owned(),
                points: outage
                    .run(s)
                    .per_window
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| (i as f64 * 0.1, c as f64))
                    .collect(),
            })
            .collect();
        let dir = std::env::temp_dir().join(format!("herd-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("outage.svg");
        line_chart(
            &path,
            "Calls per 100 ms",
            ("time (s)", "calls per 100 ms"),
            &series,
            OUTAGE_AXES,
        )
        .unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        (series, svg)
    }

    const OUTAGE_AXES: Axes = Axes {
        log_y: true,
        x_max: Some(20.0),
        whole_x: false,
    };

    #[test]
    fn an_open_model_chart_has_two_panels_naming_every_strategy_with_dashed_lines() {
        use crate::open::{Open, OpenStrategy};
        let open = Open {
            rate: 200.0,
            capacity: 400,
            ..Open::default()
        };
        let results = open.compare();
        let per_second = |v: &[u32]| -> Vec<(f64, f64)> {
            v.iter()
                .enumerate()
                .map(|(i, &c)| (i as f64, f64::from(c)))
                .collect()
        };
        let panel = |f: fn(&crate::open::OpenResult) -> &[u32]| -> Vec<Series> {
            results
                .iter()
                .map(|r| Series {
                    name: r.strategy.name().to_owned(),
                    points: per_second(f(r)),
                })
                .collect()
        };
        let dir = std::env::temp_dir().join(format!("herd-open-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("open.svg");
        panels_chart(
            &path,
            "open",
            "time (s)",
            &[
                ("goodput", panel(|r| &r.goodput)),
                ("offered", panel(|r| &r.offered)),
            ],
            open.end().as_secs_f64(),
        )
        .unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        well_formed(&svg).unwrap();
        for s in OpenStrategy::ALL {
            assert!(
                svg.contains(&format!(">{}<", s.name())) || svg.contains(s.name()),
                "{s}"
            );
        }
        assert!(svg.contains("goodput") && svg.contains("offered"));
        // Two lines per strategy (one a panel) plus a legend sample each, all but the solid
        // blue one dashed.
        let drawn = lines(&svg);
        assert_eq!(drawn.len(), 3 * OpenStrategy::ALL.len(), "{drawn:?}");
        for style in &STYLES[..OpenStrategy::ALL.len()] {
            let dash: Vec<String> = style.dash.iter().map(u8::to_string).collect();
            let of_style = drawn
                .iter()
                .filter(|(stroke, d)| *stroke == style.hex() && *d == dash.join(" "))
                .count();
            assert_eq!(of_style, 3, "{style:?} in {drawn:?}");
        }
    }

    #[test]
    fn an_outage_chart_is_well_formed_svg_naming_every_series() {
        let (_, svg) = outage_chart("chart-test");
        assert!(
            svg.trim_start().starts_with("<svg"),
            "{}",
            &svg[..svg.len().min(80)]
        );
        well_formed(&svg).unwrap();
        let texts: Vec<&str> = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim()))
            .collect();
        for text in ["Calls per 100 ms", "time (s)", "calls per 100 ms"] {
            assert!(texts.contains(&text), "no <text> for {text:?} in {texts:?}");
        }
        for s in Strategy::ALL {
            assert!(texts.contains(&s.name()), "the legend lacks {s}");
        }
    }

    #[test]
    fn the_line_styles_differ_pairwise_in_colour_and_in_dash() {
        assert!(Strategy::ALL.len() <= STYLES.len());
        for (i, a) in STYLES.iter().enumerate() {
            for b in &STYLES[i + 1..] {
                assert_ne!(a.color, b.color, "{a:?} and {b:?}");
                assert_ne!(a.dash, b.dash, "{a:?} and {b:?}");
            }
            // Not the axes' black, which `dashed` must leave alone.
            assert_ne!(a.color, (0, 0, 0));
        }
    }

    /// Each `<polyline>` of `svg` drawn as wide as a line: its stroke and its dash array
    /// (empty when solid).
    fn lines(svg: &str) -> Vec<(String, String)> {
        let attr = |tag: &str, name: &str| -> String {
            tag.split_once(&format!(" {name}=\""))
                .and_then(|(_, v)| v.split_once('"'))
                .map_or(String::new(), |(v, _)| v.to_owned())
        };
        svg.split("<polyline")
            .skip(1)
            .map(|t| t.split_once("/>").map_or(t, |(tag, _)| tag))
            .filter(|tag| attr(tag, "stroke-width") == LINE_WIDTH.to_string())
            .map(|tag| (attr(tag, "stroke"), attr(tag, "stroke-dasharray")))
            .collect()
    }

    #[test]
    fn every_strategy_is_drawn_in_a_colour_and_a_dash_of_its_own() {
        let (series, svg) = outage_chart("style-test");
        let dir = std::env::temp_dir().join(format!("herd-style-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("outage.svg");
        let axes = OUTAGE_AXES;
        // One more line than there are styles is refused, not drawn in a style used twice.
        let mut more = series;
        more.push(Series {
            name: "one too many".to_owned(),
            points: vec![(0.0, 1.0), (1.0, 2.0)],
        });
        assert!(line_chart(&path, "t", ("x", "y"), &more, axes).is_err());
        std::fs::remove_dir_all(&dir).ok();

        well_formed(&svg).unwrap();
        // Each strategy's line and its legend sample, in the strategy's style: 7 colours, each
        // with one dash, and the 7 dashes (one of them solid) all different.
        let mut drawn = lines(&svg);
        drawn.sort();
        let count = drawn.len();
        drawn.dedup();
        assert_eq!(count, 2 * Strategy::ALL.len(), "{drawn:?}");
        let expected: Vec<(String, String)> = STYLES[..Strategy::ALL.len()]
            .iter()
            .map(|s| {
                let dash: Vec<String> = s.dash.iter().map(u8::to_string).collect();
                (s.hex(), dash.join(" "))
            })
            .collect();
        let mut sorted = expected.clone();
        sorted.sort();
        assert_eq!(drawn, sorted);
        for (i, (color, dash)) in expected.iter().enumerate() {
            for (other_color, other_dash) in &expected[i + 1..] {
                assert_ne!(color, other_color);
                assert_ne!(dash, other_dash);
            }
        }
        // The axes and ticks keep their solid black.
        let black = svg
            .split("<polyline")
            .skip(1)
            .filter_map(|t| t.split_once("/>"))
            .filter(|(tag, _)| tag.contains("stroke=\"#000000\""));
        assert!(black.clone().count() > 0);
        assert!(black.into_iter().all(|(tag, _)| !tag.contains("dasharray")));
    }

    #[test]
    fn dashed_leaves_an_svg_without_dashes_as_it_was() {
        let svg = "<svg><polyline stroke=\"#0072B2\" points=\"0,0 1,1\"/></svg>";
        assert_eq!(dashed(svg, &[STYLES[3]]), svg);
        assert_eq!(
            dashed(
                svg,
                &[Style {
                    color: (0, 114, 178),
                    dash: &[3, 1]
                }]
            ),
            "<svg><polyline stroke=\"#0072B2\" stroke-dasharray=\"3 1\" points=\"0,0 1,1\"/></svg>"
        );
    }

    #[test]
    fn a_ccdf_falls_from_all_to_one_value_above_the_last_point() {
        let values: Vec<u64> = (1..=1000).map(|i| i * 1_000_000).collect();
        let points = ccdf(&values, 1e-6);
        assert!(points.len() > 300);
        assert!(points
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 >= w[1].1));
        assert_eq!(points[0], (1.0, 0.999));
        assert_eq!(*points.last().unwrap(), (999.0, 0.001));
        assert!(ccdf(&[], 1.0).is_empty());
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.001), "0.1%");
        assert_eq!(percent(0.00001), "0.001%");
    }

    #[test]
    fn a_tail_chart_is_well_formed_svg_naming_every_series() {
        let tail = crate::tail::Tail {
            calls: 2_000,
            ..crate::tail::Tail::default()
        };
        let series: Vec<Series> = [
            crate::tail::Hedging::None,
            crate::tail::Hedging::Percentile(95),
        ]
        .iter()
        .map(|&h| Series {
            name: h.to_string(),
            points: ccdf(&tail.run(h).latencies, 1e-6),
        })
        .collect();
        let dir = std::env::temp_dir().join(format!("herd-ccdf-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tail.svg");
        ccdf_chart(&path, "Tail", ("latency (ms)", "calls slower"), &series).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        well_formed(&svg).unwrap();
        for text in [
            "Tail",
            "latency (ms)",
            "calls slower",
            "none",
            "p95 (adaptive)",
        ] {
            assert!(
                svg.contains(&format!(">{text}<")) || svg.contains(text),
                "{text}"
            );
        }
    }

    #[test]
    fn the_checker_rejects_broken_svg() {
        assert!(well_formed("<svg><g></svg>").is_err());
        assert!(well_formed("<svg><text>a</text></svg>").is_ok());
    }
}
