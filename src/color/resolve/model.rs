//! The resolver's model constants: the few numbers of the likelihood model that are not
//! fixed by the devices' physics, gathered in one place so that an evaluation can refit
//! them without the scans it scores (`cubot bench resolve --cross-validate`).
//!
//! Level: part of `color::resolve`; plain data. Must not depend on anything else.

/// The constants of the likelihood model. [`Model::default`] holds the values the
/// resolver uses; each field says how its value was chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Degrees of freedom of each colour class's Student-t (per axis of its frame). Low
    /// values make a reading far from its class cheap (a glare spot or a shadowed sticker
    /// must not outvote the cube's rules); high values approach a Gaussian.
    pub nu: f64,
    /// Weight, in stickers, of the prior that a face and a sticker kind are lit evenly
    /// (see `light`).
    pub light_prior: f64,
    /// Weight, in readings, of the typical class spread in each class's own spread.
    pub spread_prior: f64,
    /// Factor on the devices' relative read noise (camera 0.2 %, EV3 0.4 % of the value,
    /// on top of quantisation).
    pub noise_scale: f64,
    /// Standard deviation of a clipped channel's true value, as a fraction of full scale.
    pub clipped_sigma: f64,
    /// Weight, in readings, of a calibration profile's colour in its class's mean and
    /// spread.
    pub profile_weight: f64,
    /// Prior spread of a colour class's mean before any of its stickers is read, in units
    /// of the spread of the class's readings (per axis): the Occam factor of a class's mean
    /// when a face is unread (see `refine`). Not used when every sticker is read. 50 (a
    /// class's readings spread by 2–3 CIELAB units, the colours of cubes over 100 or more):
    /// a solved cube with one face unread, read on each of the 48 synthetic palettes,
    /// scales and faces, is a doubt 8 times at 50 and 17 at 20, and the random cubes of
    /// `bench resolve --unread-face` come out alike at 20, 50 and 150. It also stands in for
    /// the Occam factor of a class's spread, which is fitted to few readings too.
    pub mean_spread: f64,
    /// Calibration of the margins: the model's log-likelihood ratios are divided by this
    /// before they are reported or compared with the doubt threshold, so that a margin of
    /// m nats means that the best guess is wrong about once in 1 + e^m on real scans.
    pub temperature: f64,
}

impl Default for Model {
    fn default() -> Model {
        Model {
            nu: 4.0,
            light_prior: 3.0,
            spread_prior: 1.0,
            noise_scale: 1.0,
            clipped_sigma: 0.08,
            profile_weight: 2.0,
            mean_spread: 50.0,
            temperature: 1.0,
        }
    }
}
