# label: hazard silent
# why: LTXVImgToVideoInplace writes the encoded image frames into latent["samples"] in place, so the upstream latent that also feeds a second sampler branch silently changes.
# source: https://github.com/Comfy-Org/ComfyUI/pull/13793
import torch
import torch.nn as nn

torch.manual_seed(0)


class VideoVAE(nn.Module):
    downscale_index_formula = (8, 4, 4)

    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 4, 4, stride=4)

    def encode(self, pixels):
        # pixels: (frames, H, W, 3) -> (1, C, frames, h, w)
        x = self.enc(pixels.movedim(-1, 1))
        return x.movedim(0, 1).unsqueeze(0)


class LTXVImgToVideoInplace:
    def generate(self, vae, image, latent, strength, bypass=False):
        if bypass:
            return (latent,)

        samples = latent["samples"]
        _, height_scale_factor, width_scale_factor = vae.downscale_index_formula

        batch, _, latent_frames, latent_height, latent_width = samples.shape
        width = latent_width * width_scale_factor
        height = latent_height * height_scale_factor

        pixels = image
        encode_pixels = pixels[:, :, :, :3]
        t = vae.encode(encode_pixels)

        samples[:, :, :t.shape[2]] = t  # <-- IPL004: writes into the caller's latent["samples"]

        conditioning_latent_frames_mask = torch.ones(
            (batch, 1, latent_frames, 1, 1), dtype=torch.float32, device=samples.device)
        conditioning_latent_frames_mask[:, :, :t.shape[2]] = 1.0 - strength
        return ({"samples": samples, "noise_mask": conditioning_latent_frames_mask},)


def toy_sampler(latent, steps=2):
    x = latent["samples"]
    mask = latent.get("noise_mask", torch.ones_like(x[:, :1]))
    for _ in range(steps):
        x = x - 0.1 * mask * x
    return x


vae = VideoVAE()
empty_latent = {"samples": torch.zeros(1, 4, 3, 2, 2)}
image = torch.rand(1, 8, 8, 3)
with torch.no_grad():
    (i2v_latent,) = LTXVImgToVideoInplace().generate(vae, image, empty_latent, strength=0.9)
    i2v_video = toy_sampler(i2v_latent)
    # second branch of the graph: plain text-to-video from the same upstream empty latent
    t2v_video = toy_sampler(empty_latent)
