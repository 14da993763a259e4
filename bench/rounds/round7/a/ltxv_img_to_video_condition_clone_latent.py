# label: safe
# why: the proposed fix clones latent["samples"] before writing the conditioning frames, so the cached empty latent is never mutated and each list item keeps its own image.
# source: https://github.com/Lightricks/ComfyUI-LTXVideo/pull/552
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv3d(3, 4, kernel_size=(1, 8, 8), stride=(1, 8, 8))

    def encode(self, pixels):
        # pixels: (frames, H, W, C) -> (1, 4, frames, H/8, W/8)
        x = pixels.permute(3, 0, 1, 2).unsqueeze(0)
        return self.enc(x)


class EmptyLTXVLatentVideo:
    FUNCTION = "generate"

    def generate(self, width, height, length, batch_size=1):
        latent = torch.zeros([batch_size, 4, ((length - 1) // 8) + 1, height // 8, width // 8])
        return ({"samples": latent},)


class LTXVImgToVideoConditionOnly:
    FUNCTION = "generate"

    def generate(self, vae, image, latent, strength=1.0):
        encode_pixels = image[:, :, :, :3]
        t = vae.encode(encode_pixels)

        samples = latent["samples"].clone()
        samples[:, :, : t.shape[2]] = t

        conditioning_latent_frames_mask = torch.ones(
            (samples.shape[0], 1, samples.shape[2], 1, 1), dtype=torch.float32)
        conditioning_latent_frames_mask[:, :, : t.shape[2]] = 1.0 - strength
        return ({"samples": samples, "noise_mask": conditioning_latent_frames_mask},)


vae = TinyVAE()
images = [torch.rand(1, 16, 16, 3) for _ in range(3)]  # "Image Batch to Image List"
empty_node = EmptyLTXVLatentVideo()
cond_node = LTXVImgToVideoConditionOnly()

with torch.no_grad():
    cached_latent = empty_node.generate(16, 16, 17)[0]  # fixed inputs: executed once and cached
    conditioned = [cond_node.generate(vae, img, cached_latent)[0] for img in images]
    first_frames = torch.stack([c["samples"][:, :, 0] for c in conditioned])
