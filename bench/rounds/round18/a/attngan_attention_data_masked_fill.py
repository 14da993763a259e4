# label: safe
# why: GlobalAttentionGeneral masks padded words with attn.data.masked_fill_(-inf) before the softmax; bmm does not need its output for backward and the softmax gives those words zero weight and zero gradient, so the .data write does not change any result.
# source: https://github.com/taoxugit/AttnGAN/issues/93
import torch
import torch.nn as nn

torch.manual_seed(0)


def conv1x1(in_planes, out_planes, bias=False):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=1, padding=0, bias=bias)


class GlobalAttentionGeneral(nn.Module):
    def __init__(self, idf, cdf):
        super(GlobalAttentionGeneral, self).__init__()
        self.conv_context = conv1x1(cdf, idf)
        self.sm = nn.Softmax(dim=1)
        self.mask = None

    def applyMask(self, mask):
        self.mask = mask  # batch x sourceL

    def forward(self, input, context):
        """
        input: batch x idf x ih x iw (queryL=ihxiw)
        context: batch x cdf x sourceL
        """
        ih, iw = input.size(2), input.size(3)
        queryL = ih * iw
        batch_size, sourceL = context.size(0), context.size(2)

        # --> batch x queryL x idf
        target = input.view(batch_size, -1, queryL)
        targetT = torch.transpose(target, 1, 2).contiguous()
        # batch x cdf x sourceL --> batch x cdf x sourceL x 1
        sourceT = context.unsqueeze(3)
        # --> batch x idf x sourceL
        sourceT = self.conv_context(sourceT).squeeze(3)

        # Get attention
        # (batch x queryL x idf)(batch x idf x sourceL)
        # -->batch x queryL x sourceL
        attn = torch.bmm(targetT, sourceT)
        # --> batch*queryL x sourceL
        attn = attn.view(batch_size * queryL, sourceL)
        if self.mask is not None:
            # batch_size x sourceL --> batch_size*queryL x sourceL
            mask = self.mask.repeat(queryL, 1)
            attn.data.masked_fill_(mask.data, -float("inf"))
        attn = self.sm(attn)  # Eq. (2) in AttnGAN paper
        # --> batch x queryL x sourceL
        attn = attn.view(batch_size, queryL, sourceL)
        # --> batch x sourceL x queryL
        attn = torch.transpose(attn, 1, 2).contiguous()

        # (batch x idf x sourceL)(batch x sourceL x queryL)
        # --> batch x idf x queryL
        weightedContext = torch.bmm(sourceT, attn)
        weightedContext = weightedContext.view(batch_size, -1, ih, iw)
        attn = attn.view(batch_size, -1, ih, iw)
        return weightedContext, attn


class NEXT_STAGE_G(nn.Module):
    def __init__(self, ngf, nef):
        super(NEXT_STAGE_G, self).__init__()
        self.att = GlobalAttentionGeneral(ngf, nef)
        self.residual = nn.Sequential(nn.Conv2d(ngf * 2, ngf, 3, padding=1), nn.BatchNorm2d(ngf), nn.ReLU())
        self.img = nn.Sequential(nn.Conv2d(ngf, 3, 3, padding=1), nn.Tanh())

    def forward(self, h_code, c_code, word_embs, mask):
        self.att.applyMask(mask)
        c_code, att = self.att(h_code, word_embs)
        h_c_code = torch.cat((h_code, c_code), 1)
        out_code = self.residual(h_c_code)
        return out_code, att


netG = NEXT_STAGE_G(ngf=8, nef=6)
h_code = torch.randn(2, 8, 4, 4, requires_grad=True)
words_embs = torch.randn(2, 6, 5, requires_grad=True)
captions = torch.tensor([[3, 7, 2, 0, 0], [5, 1, 4, 9, 0]])
mask = captions == 0
out_code, att_maps = netG(h_code, None, words_embs, mask)
fake_img = netG.img(out_code)
errG = fake_img.pow(2).mean() + att_maps.pow(2).mean()
errG.backward()
