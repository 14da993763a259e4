# label: safe
# why: `image /= magic` divides a slice of the irfft output in place, but neither the slice nor the inverse FFT saves that output for backward, so the gradient reaching the spectrum parameter is the same as with `image = image / magic`.
# source: https://github.com/greentfrapp/lucent/pull/1 (pre-fix lucent/optvis/param/spatial.py, commit d6a3c0f3cf933408814ceeb50443f112978b056a)
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("cpu")


def rfft2d_freqs(h, w):
    """Computes 2D spectrum frequencies."""
    fy = torch.fft.fftfreq(h)[:, None]
    if w % 2 == 1:
        fx = torch.fft.fftfreq(w)[: w // 2 + 2]
    else:
        fx = torch.fft.fftfreq(w)[: w // 2 + 1]
    return torch.sqrt(fx * fx + fy * fy)


def fft_image(shape, sd=None, decay_power=1):
    batch, channels, h, w = shape
    freqs = rfft2d_freqs(h, w)
    init_val_size = (batch, channels) + freqs.shape + (2,)  # 2 for imaginary and real components
    sd = sd or 0.01

    spectrum_real_imag_t = (torch.randn(*init_val_size) * sd).to(device).requires_grad_(True)

    scale = 1.0 / torch.clamp(freqs, min=1.0 / max(w, h)) ** decay_power
    scale = scale.float()[None, None, ..., None].to(device)

    def inner():
        scaled_spectrum_t = scale * spectrum_real_imag_t
        image = torch.fft.irfft2(torch.view_as_complex(scaled_spectrum_t), s=(h, w), norm="ortho")
        image = image[:batch, :channels, :h, :w]
        magic = 4.0  # Magic constant from Lucid library; increasing this seems to reduce saturation
        image /= magic
        return image
    return [spectrum_real_imag_t], inner


def render_vis(model, objective_channel, thresholds=(3,)):
    params, image_f = fft_image((1, 3, 16, 16))
    optimizer = torch.optim.Adam(params, lr=5e-2)
    hook_out = {}

    def hook(module, inp, out):
        hook_out.update(conv=out)

    model[0].register_forward_hook(hook)
    for i in range(1, max(thresholds) + 1):
        optimizer.zero_grad()
        model(torch.sigmoid(image_f()))
        loss = -hook_out["conv"][:, objective_channel].mean()
        loss.backward()
        optimizer.step()
    return params[0].detach(), loss.detach()


def main():
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
    return render_vis(model, objective_channel=2)


spectrum, final_loss = main()
