# label: hazard silent
# why: the shift transform writes the shifted samples back into the AudioItem's own signal, so after the 20-call timing loop the example clip is shifted out of frame and the following AddNoise example runs on an empty signal.
# source: https://github.com/fastaudio/fastai2_audio/issues/5
import random
import torch

torch.manual_seed(0)
random.seed(0)


class AudioItem:
    def __init__(self, sig, sr):
        self.sig = sig
        self.sr = sr

    @property
    def nsamples(self):
        return self.sig.shape[-1]


def _audio_sc_ex():
    t = torch.linspace(0, 1, 200)
    return AudioItem(torch.sin(2 * 3.14159 * 5 * t).unsqueeze(0), 200)


def SignalShifter(max_pct=0.2, roll=False):
    def _inner(ai):
        s = int(random.uniform(0.5, 1) * max_pct * ai.nsamples)
        sig = ai.sig
        if roll:
            sig[...] = torch.roll(sig, s, dims=-1)  # <-- IPL004: rolls the caller's signal in place
        else:
            sig[..., s:] = sig[..., :-s].clone()  # <-- IPL004: shifts the caller's signal in place
            sig[..., :s] = 0  # <-- IPL004: zero-fills the caller's signal in place
        return ai

    return _inner


def AddNoise(noise_level=0.05):
    def _inner(ai):
        noise = torch.randn_like(ai.sig) * noise_level * ai.sig.abs().max()
        return AudioItem(ai.sig + noise, ai.sr)

    return _inner


audio_orig = _audio_sc_ex()
shifter = SignalShifter(max_pct=0.2)
for _ in range(20):  # timing test
    shifted = shifter(audio_orig)
shifted_sig = shifted.sig
noisy = AddNoise(0.05)(audio_orig)
noisy_sig = noisy.sig
orig_energy = audio_orig.sig.pow(2).sum()
