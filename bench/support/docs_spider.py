"""The Scrapy side of `npm run bench:scrapy`: a plain spider as a Scrapy user would write it.

It starts at `-a start=URL`, follows every link on that host, and for each HTML page yields
its URL, title and visible text (what the crawler's `pages` table holds in `text_full`).
Robots, concurrency and delays are set on the command line by the bench.
"""
from urllib.parse import urlparse

import scrapy
from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor


class DocsSpider(scrapy.Spider):
    name = "docs"

    def __init__(self, start, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]
        # the offsite middleware keeps the crawl on this host (LinkExtractor's allow_domains
        # would compare "host:port" and follow nothing)
        self.allowed_domains = [urlparse(start).hostname]
        self.links = LinkExtractor()

    def parse(self, response):
        if not isinstance(response, HtmlResponse):
            return
        texts = response.xpath("//body//text()[not(ancestor::script) and not(ancestor::style)]").getall()
        yield {
            "url": response.url,
            "title": response.css("title::text").get(),
            "text": " ".join(t.strip() for t in texts if t.strip()),
        }
        for link in self.links.extract_links(response):
            yield response.follow(link, self.parse)
