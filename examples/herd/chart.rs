//! SVG line charts, drawn by plotters' SVG backend: text is written as SVG `<text>`, so no
//! system font or C library is needed to make them.

use std::error::Error;
use std::path::Path;

use plotters::prelude::*;

/// One line: its legend name and its points.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Distinct colours that read on white (the default palette's yellow does not).
const COLORS: [RGBColor; 6] = [
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// How the axes are drawn.
#[derive(Clone, Copy, Debug, Default)]
pub struct Axes {
    /// A logarithmic y axis (values below 1 are drawn at 1).
    pub log_y: bool,
    /// Cut the x axis here.
    pub x_max: Option<f64>,
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
    let root = SVGBackend::new(path, (960, 540)).into_drawing_area();
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
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| format!("{y:.0}"))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            for (i, s) in series.iter().enumerate() {
                let color = COLORS[i % COLORS.len()].stroke_width(2);
                let line = visible(s).into_iter().map(|(x, y)| (x, $y(y)));
                chart
                    .draw_series(LineSeries::new(line, color))?
                    .label(s.name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], color));
            }
            chart
                .configure_series_labels()
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
    let root = SVGBackend::new(path, (960, 540)).into_drawing_area();
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
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()].stroke_width(2);
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), color))?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], color));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font(("sans-serif", 16))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
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

    #[test]
    fn an_outage_chart_is_well_formed_svg_naming_every_series() {
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
        let dir = std::env::temp_dir().join(format!("herd-chart-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("outage.svg");
        let axes = Axes {
            log_y: true,
            x_max: Some(20.0),
        };
        line_chart(
            &path,
            "Calls per 100 ms",
            ("time (s)", "calls per 100 ms"),
            &series,
            axes,
        )
        .unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();
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
